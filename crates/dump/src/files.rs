//! The data files of a dump: JSON Lines, plain or gzip.
//!
//! What it is: [`DataWriter`], which writes one document per line into a temporary file and
//! moves it to its name only when the collection's dump is complete (so an interrupted or
//! retried dump never leaves a partial data file under the final name), and [`LineReader`],
//! which reads a data file line by line, decompressing it when its name ends in `.gz`.
//!
//! What it is not: the format of a line (see [`crate::format`]).
//!
//! Invariants: a line is at most [`LINE_MAX`] bytes, the largest request body the server
//! takes; the byte counts are of the uncompressed JSON.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// The longest line read: the server's default `--http.max-body-size`.
pub const LINE_MAX: usize = 512 << 20;

enum Sink {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
}

/// A data file being written.
pub struct DataWriter {
    sink: Sink,
    temporary: PathBuf,
    path: PathBuf,
    /// Uncompressed bytes written.
    pub bytes: u64,
    /// Lines written.
    pub lines: u64,
}

impl DataWriter {
    /// Starts `path` (compressed when `gzip`), writing into `path.tmp` until [`finish`].
    ///
    /// [`finish`]: DataWriter::finish
    pub fn create(path: &Path, gzip: bool) -> std::io::Result<DataWriter> {
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        let temporary = PathBuf::from(temporary);
        let file = BufWriter::with_capacity(1 << 20, File::create(&temporary)?);
        let sink = if gzip {
            Sink::Gzip(GzEncoder::new(file, Compression::default()))
        } else {
            Sink::Plain(file)
        };
        Ok(DataWriter {
            sink,
            temporary,
            path: path.to_owned(),
            bytes: 0,
            lines: 0,
        })
    }

    /// Writes one line (`line` without its newline).
    pub fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let out: &mut dyn Write = match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w,
        };
        out.write_all(line)?;
        out.write_all(b"\n")?;
        self.bytes += line.len() as u64 + 1;
        self.lines += 1;
        Ok(())
    }

    /// Completes the file, syncs it and gives it its name.
    pub fn finish(self) -> std::io::Result<()> {
        let file = match self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
        };
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&self.temporary, &self.path)
    }

    /// Drops the unfinished file.
    pub fn discard(self) {
        drop(self.sink);
        let _ = std::fs::remove_file(&self.temporary);
    }
}

/// Reads a data file line by line.
pub struct LineReader {
    reader: Box<dyn BufRead + Send>,
    /// Uncompressed bytes read.
    pub bytes: u64,
}

impl LineReader {
    /// Opens `path`, decompressing when its name ends in `.gz`.
    pub fn open(path: &Path) -> std::io::Result<LineReader> {
        let file = File::open(path)?;
        let gz = path.extension().is_some_and(|e| e == "gz");
        let reader: Box<dyn BufRead + Send> = if gz {
            Box::new(BufReader::with_capacity(
                1 << 20,
                MultiGzDecoder::new(BufReader::new(file)),
            ))
        } else {
            Box::new(BufReader::with_capacity(1 << 20, file))
        };
        Ok(LineReader { reader, bytes: 0 })
    }

    /// Reads the next line into `line` (cleared first, without its newline); false at the end.
    pub fn next_line(&mut self, line: &mut Vec<u8>) -> std::io::Result<bool> {
        line.clear();
        let limit = LINE_MAX as u64 + 1;
        let n = (&mut self.reader).take(limit).read_until(b'\n', line)?;
        if n == 0 {
            return Ok(false);
        }
        self.bytes += n as u64;
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() > LINE_MAX {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line is longer than {LINE_MAX} bytes"),
            ));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(gzip: bool) {
        let dir = tempfile::tempdir().unwrap();
        let name = if gzip {
            "c.data.json.gz"
        } else {
            "c.data.json"
        };
        let path = dir.path().join(name);
        let mut writer = DataWriter::create(&path, gzip).unwrap();
        writer.write_line(br#"{"_key":"a"}"#).unwrap();
        writer.write_line(br#"{"_key":"b"}"#).unwrap();
        assert!(
            !path.exists(),
            "the name appears only when the file is complete"
        );
        assert_eq!((writer.lines, writer.bytes), (2, 26));
        writer.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(raw.starts_with(&[0x1f, 0x8b]), gzip);
        let mut reader = LineReader::open(&path).unwrap();
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while reader.next_line(&mut line).unwrap() {
            lines.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(lines, [r#"{"_key":"a"}"#, r#"{"_key":"b"}"#]);
        assert_eq!(reader.bytes, 26);
    }

    #[test]
    fn plain_and_gzip_files_read_back_line_by_line() {
        roundtrip(false);
        roundtrip(true);
    }

    #[test]
    fn a_discarded_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.data.json");
        let mut writer = DataWriter::create(&path, false).unwrap();
        writer.write_line(b"{}").unwrap();
        writer.discard();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
