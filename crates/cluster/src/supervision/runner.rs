//! The supervising coordinator: [`Supervisor`] (campaign, then tick while leading) and
//! [`SupervisionRunner`], the thread that steps it once per `frequency`.
//!
//! What it is: every coordinator runs a [`SupervisionRunner`]. Each step keeps the
//! coordinator's election lease alive (granting a new one when it expired), campaigns with
//! `quince_meta::election::try_lead` under `Layout::supervision_election()`, and, only while
//! it leads, runs one [`Supervision::tick`] fenced by that leadership. [`Supervisor::step`] takes
//! the time as an argument, so simulations drive the same code with simulated time.
//!
//! What it is not: the judgement or the failover (`tick.rs`).
//!
//! Invariants: at most one coordinator's writes succeed at any revision (the fence); a
//! supervisor that stops revokes its lease, so another takes over at its next step instead
//! of after the lease's time to live.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::SystemTime;

use quince_meta::election::{try_lead, Leadership};
use quince_meta::{LeaseId, MetaError, MetaStore};

use crate::layout::{Layout, ServerId};
use crate::supervision::tick::{Supervision, TickError, TickReport};
use crate::supervision::SupervisionConfig;

/// One coordinator's side of the supervision election, and its supervision.
pub struct Supervisor {
    store: Arc<dyn MetaStore>,
    layout: Layout,
    me: ServerId,
    supervision: Supervision,
    lease: Option<LeaseId>,
    leadership: Option<Leadership>,
}

impl Supervisor {
    /// The supervisor of coordinator `me` (nothing happens before the first step).
    pub fn new(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        config: SupervisionConfig,
        me: ServerId,
    ) -> Supervisor {
        Supervisor {
            supervision: Supervision::new(store.clone(), layout.clone(), config, me.clone()),
            store,
            layout,
            me,
            lease: None,
            leadership: None,
        }
    }

    /// Whether the last step found this coordinator leading.
    pub fn is_leading(&self) -> bool {
        self.leadership.is_some()
    }

    /// Keeps the lease, campaigns, and ticks at `now` when leading: the tick's report, or
    /// `None` when another coordinator leads.
    pub fn step(&mut self, now: SystemTime) -> Result<Option<TickReport>, TickError> {
        let result = self.campaign_and_tick(now);
        if result.is_err() {
            self.supervision.forget();
        }
        result
    }

    fn campaign_and_tick(&mut self, now: SystemTime) -> Result<Option<TickReport>, TickError> {
        let lease = match self.lease {
            Some(lease) => match self.store.keep_alive(lease) {
                Ok(()) => lease,
                Err(MetaError::LeaseNotFound(_)) => {
                    self.lease = None;
                    self.lose_leadership();
                    self.grant()?
                }
                Err(error) => return Err(error.into()),
            },
            None => self.grant()?,
        };
        let won = try_lead(
            &*self.store,
            &self.layout.supervision_election(),
            lease,
            self.me.as_bytes(),
        )?;
        if won != self.leadership {
            self.supervision.forget();
            if won.is_some() {
                tracing::info!(coordinator = self.me, "supervision: leading");
            }
        }
        self.leadership = won;
        let Some(leadership) = &self.leadership else {
            return Ok(None);
        };
        match self.supervision.tick(now, Some(&leadership.fence())) {
            Ok(report) => Ok(Some(report)),
            Err(TickError::Fenced) => {
                self.lose_leadership();
                Err(TickError::Fenced)
            }
            Err(error) => Err(error),
        }
    }

    fn grant(&mut self) -> Result<LeaseId, MetaError> {
        let lease = self
            .store
            .grant_lease(self.supervision.config().election_ttl)?;
        self.lease = Some(lease);
        Ok(lease)
    }

    fn lose_leadership(&mut self) {
        if self.leadership.take().is_some() {
            tracing::info!(coordinator = self.me, "supervision: no longer leading");
        }
        self.supervision.forget();
    }

    /// Leaves the election now (revokes the lease), so another coordinator takes over at its
    /// next step.
    pub fn resign(&mut self) {
        self.lose_leadership();
        if let Some(lease) = self.lease.take() {
            if let Err(error) = self.store.revoke_lease(lease) {
                tracing::debug!(%error, "supervision: revoking the election lease failed");
            }
        }
    }
}

/// The supervision thread of a coordinator; stops (and resigns) on [`SupervisionRunner::stop`]
/// or drop.
pub struct SupervisionRunner {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl SupervisionRunner {
    /// Starts the thread: one [`Supervisor::step`] at once, then one per `config.frequency`.
    pub fn start(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        config: SupervisionConfig,
        me: ServerId,
    ) -> std::io::Result<SupervisionRunner> {
        let (stop, stopped) = channel::<()>();
        let frequency = config.frequency;
        let mut supervisor = Supervisor::new(store, layout, config, me);
        let thread = std::thread::Builder::new()
            .name("supervision".into())
            .spawn(move || {
                loop {
                    if let Err(error) = supervisor.step(SystemTime::now()) {
                        tracing::warn!(%error, "supervision step failed");
                    }
                    match stopped.recv_timeout(frequency) {
                        Err(RecvTimeoutError::Timeout) => {}
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                supervisor.resign();
            })?;
        Ok(SupervisionRunner {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops the thread and waits for it (at most one step).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the supervision thread panicked");
            }
        }
    }
}

impl Drop for SupervisionRunner {
    fn drop(&mut self) {
        self.shutdown();
    }
}
