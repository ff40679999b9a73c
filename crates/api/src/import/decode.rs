//! Undoing a request's `Content-Encoding` while its body streams in, with a bound on the
//! decoded size.
//!
//! What it is: [`StreamDecoder`], fed the raw body chunk by chunk; it hands decoded bytes to a
//! sink as they come out (identity: the chunk itself; gzip and deflate: flate2's push
//! decoders). HTTP's "deflate" is the zlib format, but some clients send raw deflate, so the
//! first two bytes decide which one it is.
//!
//! What it is not: the whole-body decoder of ordinary requests (`crate::body`).
//!
//! Invariants: the sink never receives more than `limit` decoded bytes in total (413 beyond);
//! compressed input is pushed in slices of at most [`INPUT_SLICE`] bytes, so one call never
//! inflates more than that slice can expand to before the bound is checked.

use std::io::Write;

use flate2::write::{DeflateDecoder, GzDecoder, ZlibDecoder};
use http::HeaderMap;
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER, HTTP_UNSUPPORTED_MEDIA_TYPE};

use crate::body::too_large;

/// Compressed bytes pushed into a decoder at once.
const INPUT_SLICE: usize = 4096;

/// The decoder of one encoding.
enum Inflater {
    /// No encoding.
    Identity,
    /// `gzip`.
    Gzip(GzDecoder<Vec<u8>>),
    /// `deflate` whose format is not known yet: the first bytes are held here.
    DeflateUndecided(Vec<u8>),
    /// `deflate` in the zlib format.
    Zlib(ZlibDecoder<Vec<u8>>),
    /// `deflate` as a raw stream.
    Raw(DeflateDecoder<Vec<u8>>),
}

/// Decodes a body as it arrives.
pub(crate) struct StreamDecoder {
    inflater: Inflater,
    /// Decoded bytes handed on so far.
    decoded: u64,
    /// The bound on decoded bytes.
    limit: u64,
}

impl StreamDecoder {
    /// A decoder for the request's `Content-Encoding` (415 for unknown encodings).
    pub fn new(headers: &HeaderMap, limit: usize) -> Result<StreamDecoder> {
        let encoding = headers
            .get(http::header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_default();
        let inflater = match encoding.as_str() {
            "" | "identity" => Inflater::Identity,
            "gzip" | "x-gzip" => Inflater::Gzip(GzDecoder::new(Vec::new())),
            "deflate" => Inflater::DeflateUndecided(Vec::new()),
            other => {
                return Err(ArangoError::with_message(
                    HTTP_UNSUPPORTED_MEDIA_TYPE,
                    format!("unsupported content-encoding '{other}'"),
                ))
            }
        };
        Ok(StreamDecoder {
            inflater,
            decoded: 0,
            limit: limit as u64,
        })
    }

    /// Decodes the next raw chunk into `sink`.
    pub fn feed(&mut self, raw: &[u8], sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if let Inflater::Identity = self.inflater {
            self.count(raw.len())?;
            return sink(raw);
        }
        if let Inflater::DeflateUndecided(held) = &mut self.inflater {
            held.extend_from_slice(raw);
            if held.len() < 2 {
                return Ok(());
            }
            let held = std::mem::take(held);
            self.inflater = if is_zlib_header(held[0], held[1]) {
                Inflater::Zlib(ZlibDecoder::new(Vec::new()))
            } else {
                Inflater::Raw(DeflateDecoder::new(Vec::new()))
            };
            return self.feed(&held, sink);
        }
        for slice in raw.chunks(INPUT_SLICE) {
            let result = match &mut self.inflater {
                Inflater::Gzip(d) => d.write_all(slice),
                Inflater::Zlib(d) => d.write_all(slice),
                Inflater::Raw(d) => d.write_all(slice),
                Inflater::Identity | Inflater::DeflateUndecided(_) => unreachable!("decided above"),
            };
            result.map_err(corrupt)?;
            self.drain(sink)?;
        }
        Ok(())
    }

    /// Ends the body: flushes what the decoder still holds and checks the stream is complete.
    pub fn finish(&mut self, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        if let Inflater::DeflateUndecided(held) = &mut self.inflater {
            if held.is_empty() {
                return Ok(());
            }
            let held = std::mem::take(held);
            self.inflater = Inflater::Raw(DeflateDecoder::new(Vec::new()));
            self.feed(&held, sink)?;
        }
        let result = match &mut self.inflater {
            Inflater::Identity | Inflater::DeflateUndecided(_) => return Ok(()),
            Inflater::Gzip(d) => d.try_finish(),
            Inflater::Zlib(d) => d.try_finish(),
            Inflater::Raw(d) => d.try_finish(),
        };
        result.map_err(corrupt)?;
        self.drain(sink)
    }

    /// Hands on what the decoder produced.
    fn drain(&mut self, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let out = match &mut self.inflater {
            Inflater::Gzip(d) => d.get_mut(),
            Inflater::Zlib(d) => d.get_mut(),
            Inflater::Raw(d) => d.get_mut(),
            Inflater::Identity | Inflater::DeflateUndecided(_) => return Ok(()),
        };
        if out.is_empty() {
            return Ok(());
        }
        let produced = std::mem::take(out);
        self.count(produced.len())?;
        let result = sink(&produced);
        // The buffer goes back to the decoder so that its capacity is reused.
        let mut produced = produced;
        produced.clear();
        match &mut self.inflater {
            Inflater::Gzip(d) => *d.get_mut() = produced,
            Inflater::Zlib(d) => *d.get_mut() = produced,
            Inflater::Raw(d) => *d.get_mut() = produced,
            Inflater::Identity | Inflater::DeflateUndecided(_) => {}
        }
        result
    }

    fn count(&mut self, n: usize) -> Result<()> {
        self.decoded += n as u64;
        if self.decoded > self.limit {
            return Err(too_large(self.limit as usize));
        }
        Ok(())
    }
}

/// True when two bytes start a zlib stream (deflate method, header checksum divisible by 31).
fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0f == 8 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

fn corrupt(e: std::io::Error) -> ArangoError {
    ArangoError::with_message(
        HTTP_BAD_PARAMETER,
        format!("could not decompress the request body: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use http::HeaderValue;

    use super::*;

    fn headers(encoding: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::CONTENT_ENCODING,
            HeaderValue::from_str(encoding).unwrap(),
        );
        h
    }

    fn decode(encoding: &str, body: &[u8], chunk: usize, limit: usize) -> Result<Vec<u8>> {
        let mut d = StreamDecoder::new(&headers(encoding), limit)?;
        let mut out = Vec::new();
        let mut sink = |b: &[u8]| -> Result<()> {
            out.extend_from_slice(b);
            Ok(())
        };
        for c in body.chunks(chunk.max(1)) {
            d.feed(c, &mut sink)?;
        }
        d.finish(&mut sink)?;
        Ok(out)
    }

    fn data() -> Vec<u8> {
        (0..20_000u32)
            .flat_map(|i| format!("{{\"i\":{i}}}\n").into_bytes())
            .collect()
    }

    #[test]
    fn every_encoding_decodes_in_any_chunking() {
        let plain = data();
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&plain).unwrap();
        let gz = gz.finish().unwrap();
        let mut zl = ZlibEncoder::new(Vec::new(), Compression::fast());
        zl.write_all(&plain).unwrap();
        let zl = zl.finish().unwrap();
        let mut raw = DeflateEncoder::new(Vec::new(), Compression::fast());
        raw.write_all(&plain).unwrap();
        let raw = raw.finish().unwrap();
        for chunk in [1, 7, 4096, 1 << 20] {
            assert_eq!(decode("identity", &plain, chunk, 1 << 30).unwrap(), plain);
            assert_eq!(decode("gzip", &gz, chunk, 1 << 30).unwrap(), plain);
            assert_eq!(decode("deflate", &zl, chunk, 1 << 30).unwrap(), plain);
            assert_eq!(decode("deflate", &raw, chunk, 1 << 30).unwrap(), plain);
        }
    }

    #[test]
    fn the_decoded_size_is_bounded() {
        let bomb = {
            let mut gz = GzEncoder::new(Vec::new(), Compression::best());
            gz.write_all(&vec![b' '; 4 << 20]).unwrap();
            gz.finish().unwrap()
        };
        let err = decode("gzip", &bomb, 1 << 20, (4 << 20) - 1).unwrap_err();
        assert_eq!(err.status, 413);
        assert_eq!(
            decode("gzip", &bomb, 1 << 20, 4 << 20).unwrap().len(),
            4 << 20
        );
        assert_eq!(decode("", b"abc", 1, 2).unwrap_err().status, 413);
    }

    #[test]
    fn corrupt_truncated_and_unknown_encodings_are_refused() {
        assert_eq!(
            decode("gzip", b"not gzip at all", 4, 100)
                .unwrap_err()
                .status,
            400
        );
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(&data()).unwrap();
        let gz = gz.finish().unwrap();
        let truncated = &gz[..gz.len() / 2];
        assert_eq!(
            decode("gzip", truncated, 4096, 1 << 30).unwrap_err().status,
            400
        );
        assert_eq!(decode("br", b"x", 1, 10).unwrap_err().status, 415);
    }
}
