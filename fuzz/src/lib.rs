//! What the fuzz targets share: reading structured values out of fuzz input ([`Input`]), the
//! simulated stores recovery is fuzzed on ([`stores`]), the server requests are fuzzed against
//! ([`server`]), the checks of the import loader's producers ([`loader`]), and the body type
//! that hands a request body over in chunks ([`ChunkedBody`]).
//!
//! What it is not: a fuzz target (those are `fuzz_targets/*.rs`) or a test suite. The seed
//! corpus generator (`examples/make_corpus.rs`) uses the same builders, so the seeds fit the
//! fixtures the targets open.
//!
//! Invariants: everything here is deterministic for a given input, except what a server
//! remembers between inputs (see [`server`]); nothing here panics on any input (a panic in a
//! target must always mean a bug in Quince or a broken invariant the target asserts).

pub mod loader;
pub mod server;
pub mod stores;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// A cursor over fuzz input that never fails: reads past the end give zeroes or empty slices.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// The next byte (0 at the end).
    pub fn u8(&mut self) -> u8 {
        let (first, rest) = self
            .data
            .split_first()
            .map_or((0, &[][..]), |(b, r)| (*b, r));
        self.data = rest;
        first
    }

    /// The next two bytes, little-endian (missing bytes are 0).
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next `len` bytes, or what is left when fewer remain.
    pub fn bytes(&mut self, len: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(len.min(self.data.len()));
        self.data = rest;
        head
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }
}

/// A request body delivered as a sequence of frames, the way hyper hands over a body that
/// arrives in pieces (the import path streams; other paths collect).
pub struct ChunkedBody {
    chunks: VecDeque<Bytes>,
}

impl ChunkedBody {
    /// `body` cut into pieces at `cuts` (offsets; out-of-range and repeated ones are ignored).
    pub fn new(body: &[u8], cuts: &[usize]) -> ChunkedBody {
        let mut offsets: Vec<usize> = cuts
            .iter()
            .copied()
            .filter(|c| *c > 0 && *c < body.len())
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let mut chunks = VecDeque::new();
        let mut start = 0;
        for end in offsets.into_iter().chain(std::iter::once(body.len())) {
            chunks.push_back(Bytes::copy_from_slice(&body[start..end]));
            start = end;
        }
        ChunkedBody { chunks }
    }
}

impl Body for ChunkedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.chunks.pop_front().map(|c| Ok(Frame::data(c))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.chunks.iter().map(|c| c.len() as u64).sum())
    }
}

/// The deepest nesting of `[` and `{` outside strings in `bytes`, for any bytes (JSON or not).
pub fn json_nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}
