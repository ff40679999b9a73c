//! The starter's SIGTERM and SIGINT, and its pauses: a pause ends early when either arrives.
//!
//! What it is: [`Signals`], tokio's signal streams on a current-thread runtime owned by the
//! starter's main thread; [`Signals::pause`] waits up to a duration or until a signal, and
//! [`Signals::received`] says which signal came, if any.
//!
//! What it is not: the stopping itself ([`super::supervisor`] stops the children in order).
//!
//! Invariants: from [`Signals::install`] on, SIGTERM and SIGINT no longer end the starter; the
//! first signal is kept, later ones change nothing; the runtime runs no tasks of its own and
//! lives on the caller's thread (so the children, spawned from that thread, keep their
//! parent-death signal armed).

use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The signal streams and what arrived.
pub struct Signals {
    runtime: Runtime,
    interrupt: Signal,
    terminate: Signal,
    received: Option<i32>,
}

impl Signals {
    /// Installs the handlers.
    pub fn install() -> std::io::Result<Signals> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let (interrupt, terminate) = runtime.block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        })?;
        Ok(Signals {
            runtime,
            interrupt,
            terminate,
            received: None,
        })
    }

    /// Waits `duration`, or less when SIGTERM or SIGINT arrives; returns the signal received
    /// (now or before).
    pub fn pause(&mut self, duration: Duration) -> Option<i32> {
        if self.received.is_some() {
            return self.received;
        }
        let interrupt = &mut self.interrupt;
        let terminate = &mut self.terminate;
        let got = self.runtime.block_on(async {
            tokio::select! {
                biased;
                _ = interrupt.recv() => Some(SignalKind::interrupt().as_raw_value()),
                _ = terminate.recv() => Some(SignalKind::terminate().as_raw_value()),
                _ = tokio::time::sleep(duration) => None,
            }
        });
        if self.received.is_none() {
            self.received = got;
        }
        self.received
    }

    /// The signal received, if any (without waiting).
    pub fn received(&mut self) -> Option<i32> {
        self.pause(Duration::ZERO)
    }
}
