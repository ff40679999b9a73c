//! Opening the input of `quince import`: a file or stdin, gzip or not, with a byte counter for
//! the progress bar.
//!
//! What it is: [`open`], which returns a buffered reader of the decoded input (gzip is
//! recognised by its magic bytes, whatever the file is called) and a shared count of the raw
//! bytes read so far, plus the raw size when it is known (a regular file); and [`sniff`], which
//! finds the first byte that is not whitespace without losing any input.
//!
//! What it is not: parsing (see `batch`).
//!
//! Invariants: the counter only grows and never passes the raw size of a regular file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Chain, Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;

/// Reads through, counting the bytes.
pub struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// An opened input.
pub struct Input {
    /// The decoded bytes.
    pub reader: Box<dyn BufRead + Send>,
    /// Raw bytes read so far.
    pub progress: Arc<AtomicU64>,
    /// The raw size, when known.
    pub size: Option<u64>,
}

/// Opens `path` (`-` is stdin).
pub fn open(path: &Path) -> io::Result<Input> {
    let progress = Arc::new(AtomicU64::new(0));
    let (raw, size): (Box<dyn Read + Send>, Option<u64>) = if path == Path::new("-") {
        (Box::new(io::stdin()), None)
    } else {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        let size = meta.is_file().then_some(meta.len());
        (Box::new(file), size)
    };
    let counting = Counting {
        inner: raw,
        count: Arc::clone(&progress),
    };
    let mut buffered = BufReader::with_capacity(1 << 20, counting);
    let gzip = buffered.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn BufRead + Send> = if gzip {
        Box::new(BufReader::with_capacity(
            1 << 20,
            MultiGzDecoder::new(buffered),
        ))
    } else {
        Box::new(buffered)
    };
    Ok(Input {
        reader,
        progress,
        size,
    })
}

/// A reader that yields the bytes [`sniff`] looked at, then the rest.
pub type Sniffed<R> = Chain<Cursor<Vec<u8>>, R>;

/// The first byte of `reader` that is not whitespace (None for an input of only whitespace),
/// and a reader that still yields every byte.
pub fn sniff<R: BufRead>(mut reader: R) -> io::Result<(Option<u8>, Sniffed<R>)> {
    let mut seen = Vec::new();
    let first = loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break None;
        }
        let found = buf.iter().copied().find(|b| !b.is_ascii_whitespace());
        let n = buf.len();
        seen.extend_from_slice(buf);
        reader.consume(n);
        if found.is_some() {
            break found;
        }
    };
    Ok((first, Cursor::new(seen).chain(reader)))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn gzip_is_recognised_by_its_bytes_and_progress_counts_raw_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.json");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"{\"a\":1}\n").unwrap();
        let compressed = gz.finish().unwrap();
        std::fs::write(&path, &compressed).unwrap();
        let mut input = open(&path).unwrap();
        let mut text = String::new();
        input.reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "{\"a\":1}\n");
        assert_eq!(input.size, Some(compressed.len() as u64));
        assert_eq!(
            input.progress.load(Ordering::Relaxed),
            compressed.len() as u64
        );
    }

    #[test]
    fn sniffing_loses_no_bytes() {
        let (first, mut rest) = sniff(&b"  \n [1]"[..]).unwrap();
        assert_eq!(first, Some(b'['));
        let mut all = String::new();
        rest.read_to_string(&mut all).unwrap();
        assert_eq!(all, "  \n [1]");
        assert_eq!(sniff(&b" \n"[..]).unwrap().0, None);
    }
}
