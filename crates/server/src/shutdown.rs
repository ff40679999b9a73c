//! Waiting for the signal to stop: SIGINT or SIGTERM.
//!
//! What it is: [`Signals`], installed before the server announces itself (so a signal sent
//! right after the ready line is never lost to the default action, which would end the
//! process without closing the journals), and [`Signals::wait`].
//!
//! What it is not: the shutdown sequence itself ([`crate::serve`] runs it: stop accepting,
//! drain in-flight requests within a bound, then close the catalog).

use tokio::signal::unix::{signal, Signal, SignalKind};

/// The handlers of SIGINT and SIGTERM.
pub struct Signals {
    /// SIGINT (Ctrl-C).
    interrupt: Signal,
    /// SIGTERM (service managers, `kill`).
    terminate: Signal,
}

impl Signals {
    /// Installs the handlers; from now on the signals are caught, not fatal.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Completes when either signal arrives; returns its name.
    pub async fn wait(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
        }
    }
}
