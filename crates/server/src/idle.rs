//! Idle-connection detection: a stream wrapper that notes when bytes last arrived, and a
//! watchdog that completes once none arrived for a whole timeout.
//!
//! What it is: [`ActivityIo`] (an `AsyncRead + AsyncWrite` around the connection's stream that
//! stores the time of the last successful read in an [`Activity`]) and [`watch`] (a future that
//! sleeps in coarse steps and completes when the connection has been quiet for the timeout).
//!
//! What it is not: a request timeout. A handler that runs long does not make the connection
//! idle in the client's favour or against it; the listener closes an idle connection
//! gracefully, so an in-flight request still gets its reply.
//!
//! Invariants: the recorded time only moves forward; the watchdog wakes at most once per
//! timeout while the connection is busy, so its cost does not grow with the request rate.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// When a connection last received bytes, as milliseconds since the connection started.
pub struct Activity {
    started: Instant,
    last_read_ms: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        let now_ms = self.started.elapsed().as_millis() as u64;
        self.last_read_ms.fetch_max(now_ms, Ordering::Relaxed);
    }

    fn quiet_for(&self) -> Duration {
        let now_ms = self.started.elapsed().as_millis() as u64;
        Duration::from_millis(now_ms.saturating_sub(self.last_read_ms.load(Ordering::Relaxed)))
    }
}

/// A stream that records read activity in a shared [`Activity`].
pub struct ActivityIo<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> ActivityIo<S> {
    /// Wraps `inner`; the returned `Activity` is what [`watch`] observes.
    pub fn new(inner: S) -> (Self, Arc<Activity>) {
        let activity = Arc::new(Activity {
            started: Instant::now(),
            last_read_ms: AtomicU64::new(0),
        });
        (
            ActivityIo {
                inner,
                activity: activity.clone(),
            },
            activity,
        )
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for ActivityIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ActivityIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Completes once `activity` saw no read for `timeout`.
pub async fn watch(activity: &Activity, timeout: Duration) {
    loop {
        let quiet = activity.quiet_for();
        if quiet >= timeout {
            return;
        }
        tokio::time::sleep(timeout - quiet).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_quiet_connection_times_out_and_reads_postpone_it() {
        let (client, server) = tokio::io::duplex(64);
        let (mut server, activity) = ActivityIo::new(server);
        let mut client = client;
        let timeout = Duration::from_secs(300);

        // Bytes arrive after 200 s: the watchdog must not fire at 300 s, only 300 s later.
        let reader = async {
            tokio::time::sleep(Duration::from_secs(200)).await;
            client.write_all(b"x").await.unwrap();
            let mut byte = [0u8; 1];
            server.read_exact(&mut byte).await.unwrap();
            (client, server)
        };
        let started = tokio::time::Instant::now();
        let (_client, _server) = reader.await;
        watch(&activity, timeout).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_secs(500), "fired after {waited:?}");
        assert!(
            waited < Duration::from_secs(502),
            "fired late, after {waited:?}"
        );
    }
}
