//! The process's file descriptors: raising the limit at start, and sharing it between the
//! engine's files and client connections.
//!
//! What it is: [`adjust`], which raises the soft `RLIMIT_NOFILE` to the hard one, logs both and
//! refuses to start below `--server.descriptors-minimum`, and [`Budget::split`], which divides
//! the limit: a fixed reserve for the process's own descriptors (listener, runtime, log, the
//! data directory's lock, directory syncs, static files being served), a share for the
//! storage engine's open files (`DbConfig::open_files_max`, which it never exceeds however many
//! collections and datafiles there are), and the rest for connections (never more than
//! `--server.max-connections`).
//!
//! What it is not: enforcement. The engine bounds its files (`quince_storage::io::CachedFileIo`)
//! and the listener its connections.
//!
//! Invariants: engine files + connections + reserve <= the limit, so neither side can starve
//! the other of descriptors.

use anyhow::{bail, Context};

/// Descriptors kept for everything that is neither an engine file nor a connection.
pub const RESERVE: u64 = 64;

/// The fewest descriptors the engine gets (it works with fewer, but slowly).
pub const ENGINE_FILES_MIN: u64 = 64;

/// The most descriptors the engine keeps open, however high the limit.
pub const ENGINE_FILES_MAX: u64 = 65_536;

/// The fewest connections the server needs to be useful.
pub const CONNECTIONS_MIN: u64 = 16;

/// The limit after [`adjust`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The soft limit the process now has.
    pub soft: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft descriptor limit to the hard one, logs both, and refuses a limit below
/// `minimum` (0: no minimum).
pub fn adjust(minimum: u64) -> anyhow::Result<Limit> {
    let (soft_before, hard) =
        rlimit::getrlimit(rlimit::Resource::NOFILE).context("cannot read the descriptor limit")?;
    let soft = if soft_before < hard {
        match rlimit::setrlimit(rlimit::Resource::NOFILE, hard, hard) {
            Ok(()) => hard,
            Err(error) => {
                tracing::warn!(event = "descriptors.raise_failed", %error, soft_before, hard);
                soft_before
            }
        }
    } else {
        soft_before
    };
    tracing::info!(event = "descriptors.limit", soft_before, soft, hard);
    if minimum > 0 && soft < minimum {
        bail!(
            "the file descriptor limit is {soft} (hard limit {hard}), below \
             --server.descriptors-minimum {minimum}: raise it (ulimit -n, LimitNOFILE=) or \
             lower the option"
        );
    }
    Ok(Limit { soft, hard })
}

/// How the descriptors are shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The engine's open files.
    pub engine_files: u64,
    /// Client connections open at once.
    pub connections: u64,
}

impl Budget {
    /// Splits `limit` descriptors: the reserve, a quarter for the engine (within
    /// [`ENGINE_FILES_MIN`]..=[`ENGINE_FILES_MAX`]), the rest for at most `connections_max`
    /// connections.
    pub fn split(limit: u64, connections_max: u64) -> anyhow::Result<Budget> {
        let engine_files = (limit / 4).clamp(ENGINE_FILES_MIN, ENGINE_FILES_MAX);
        let left = limit.saturating_sub(RESERVE + engine_files);
        if left < CONNECTIONS_MIN {
            bail!(
                "the file descriptor limit {limit} leaves room for only {left} connections \
                 (at least {CONNECTIONS_MIN} needed beside {engine_files} files and a reserve \
                 of {RESERVE}): raise it"
            );
        }
        let connections = left.min(connections_max);
        if connections < connections_max {
            tracing::warn!(
                event = "descriptors.connections_capped",
                limit,
                connections,
                configured = connections_max,
                "--server.max-connections is more than the descriptor limit allows"
            );
        }
        Ok(Budget {
            engine_files,
            connections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_never_exceeds_the_limit() {
        for limit in [100, 256, 1024, 4096, 20_000, 1 << 20] {
            for wanted in [16, 4096, 100_000] {
                let Ok(b) = Budget::split(limit, wanted) else {
                    assert!(limit < RESERVE + ENGINE_FILES_MIN + CONNECTIONS_MIN);
                    continue;
                };
                assert!(
                    b.engine_files + b.connections + RESERVE <= limit,
                    "{limit} {b:?}"
                );
                assert!(b.connections <= wanted && b.connections >= CONNECTIONS_MIN.min(wanted));
                assert!(b.engine_files >= ENGINE_FILES_MIN);
            }
        }
        let b = Budget::split(1024, 4096).unwrap();
        assert_eq!((b.engine_files, b.connections), (256, 704));
    }
}
