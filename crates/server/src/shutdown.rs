//! Waiting for the signal to stop: SIGINT or SIGTERM.
//!
//! What it is: [`signal`], a future that completes on the first of the two signals.
//!
//! What it is not: the shutdown sequence itself ([`crate::serve`] runs it: stop accepting,
//! drain in-flight requests within a bound, then close the catalog).

use tokio::signal::unix::{signal as unix_signal, SignalKind};

/// Completes when the process receives SIGINT or SIGTERM; returns the signal's name.
pub async fn signal() -> std::io::Result<&'static str> {
    let mut interrupt = unix_signal(SignalKind::interrupt())?;
    let mut terminate = unix_signal(SignalKind::terminate())?;
    Ok(tokio::select! {
        _ = interrupt.recv() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    })
}
