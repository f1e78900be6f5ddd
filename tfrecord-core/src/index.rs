//! Index files of record files, in the text format of DALI's `tfrecord2idx` and of the PyPI
//! `tfrecord` package (`tfrecord.tools.tfrecord2idx.create_index`): one line per record, in file
//! order, holding the byte offset of its frame and the frame's size (header, payload and footer:
//! the payload length plus 16 for TFRecord, plus 8 for OFRecord), in decimal, separated by one
//! space and ended by `\n`:
//!
//! ```text
//! 0 95
//! 95 1053
//! 1148 95
//! ```
//!
//! With an index, the records of a file can be counted without reading it ([`count_records`]),
//! and record `k` read alone ([`IndexedFile::read`]: one positioned read, both checksums
//! verified). Offsets are bytes of the file, so only uncompressed files are indexed.
//!
//! ```
//! use tfrecord_core::index::{Index, IndexedFile};
//! use tfrecord_core::{ReaderOptions, RecordWriter, WriterOptions};
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("data.tfrecord");
//! let mut writer = RecordWriter::create(&path, WriterOptions::new())?;
//! for r in [&b"first"[..], b"second", b"third"] {
//!     writer.write(r)?;
//! }
//! writer.finish()?;
//!
//! let index = Index::build(&path, ReaderOptions::new())?;
//! assert_eq!(index.to_text(), "0 21\n21 22\n43 21\n");
//!
//! let file = IndexedFile::with_index(&path, index, ReaderOptions::new())?;
//! let mut record = Vec::new();
//! file.read(1, &mut record)?;
//! assert_eq!(record, b"second");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::compression::{Compression, Format};
use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result};
use crate::reader::{ReaderOptions, RecordReader, read_exact_at};

/// The longest index line read: two 20-digit numbers, a space and a line end fit well within
/// it, and a longer line is not an index line (nor read into memory whole).
const MAX_LINE: u64 = 256;

/// One record of an index: where its frame starts in the file, and the frame's size in bytes
/// (header, payload and footer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexEntry {
    /// The byte offset of the frame.
    pub offset: u64,
    /// The size of the whole frame.
    pub size: u64,
}

/// The index of a record file: one [`IndexEntry`] per record, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    entries: Vec<IndexEntry>,
}

impl Index {
    /// Indexes an uncompressed record file, reading every frame with the checks `opts` asks
    /// for (both checksums by default); records a [`BadRecords`](crate::BadRecords) policy
    /// skips are left out of the index.
    ///
    /// # Errors
    /// A compressed file (its offsets would not be the file's), and every error reading it
    /// (naming the file, byte offset and record index).
    pub fn build(path: impl AsRef<Path>, opts: ReaderOptions) -> Result<Index> {
        let mut records = RecordReader::open(path, opts)?;
        let mut entries = Vec::new();
        walk(&mut records, |e| {
            entries.push(e);
            Ok(())
        })?;
        Ok(Index { entries })
    }

    /// Reads an index file.
    ///
    /// # Errors
    /// A file that cannot be read, and a malformed line (not two decimal numbers, an offset
    /// before the end of the record on the line before it); each names the index file and,
    /// for a line, its 1-based number.
    pub fn read(path: impl AsRef<Path>) -> Result<Index> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| Error::from(e).with_path(path))?;
        Index::parse(BufReader::new(file), path)
    }

    /// Reads an index from any text source, named `name` in errors.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn parse(text: impl BufRead, name: impl AsRef<Path>) -> Result<Index> {
        let mut entries = Vec::new();
        parse_lines(text, name.as_ref(), |e| entries.push(e))?;
        Ok(Index { entries })
    }

    /// The entries, one per record.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the index holds no record.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the index in its text form.
    ///
    /// # Errors
    /// I/O errors of `out`.
    pub fn write_to(&self, mut out: impl Write) -> io::Result<()> {
        for e in &self.entries {
            writeln!(out, "{} {}", e.offset, e.size)?;
        }
        Ok(())
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        // Writing to a `Vec` cannot fail, and the text is ASCII.
        let _ = self.write_to(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// Writes the index of the records `records` reads to `out` as it reads them (nothing is
/// kept in memory); `out_name` names `out` in errors. Returns the number of records.
///
/// # Errors
/// A compressed stream (its offsets would not be the file's), every error reading the records,
/// and I/O errors writing `out`.
pub fn write_index<R: Read>(
    records: &mut RecordReader<R>,
    mut out: impl Write,
    out_name: impl AsRef<Path>,
) -> Result<u64> {
    let out_name = out_name.as_ref();
    walk(records, |e| {
        writeln!(out, "{} {}", e.offset, e.size).map_err(|err| Error::from(err).with_path(out_name))
    })
}

/// Counts the records of an index file without reading the record file.
///
/// # Errors
/// As [`Index::read`].
pub fn count_records(path: impl AsRef<Path>) -> Result<u64> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| Error::from(e).with_path(path))?;
    let mut n = 0u64;
    parse_lines(BufReader::new(file), path, |_| n += 1)?;
    Ok(n)
}

/// Reads every record, handing each one's entry to `each`.
fn walk<R: Read>(
    records: &mut RecordReader<R>,
    mut each: impl FnMut(IndexEntry) -> Result<()>,
) -> Result<u64> {
    if records.options().get_compression() != Compression::None {
        let detail = "an index holds byte offsets into the file, which a compressed stream does \
                      not have: index the decompressed file";
        let err = Error::new(ErrorKind::Unsupported {
            detail: detail.into(),
        });
        return Err(match records.path() {
            Some(p) => err.with_path(p),
            None => err,
        });
    }
    let mut scratch = Vec::new();
    let mut n = 0u64;
    while records.read_lent(&mut scratch)?.is_some() {
        if let Some(offset) = records.last_offset() {
            let size = records.offset() - offset;
            each(IndexEntry { offset, size })?;
            n += 1;
        }
    }
    Ok(n)
}

/// Parses index lines, handing each entry to `each`. Blank lines are skipped, as DALI's and
/// NumPy's readers of the format skip them.
fn parse_lines(
    mut text: impl BufRead,
    name: &Path,
    mut each: impl FnMut(IndexEntry),
) -> Result<()> {
    let fail = |line: u64, detail: String| {
        Error::new(ErrorKind::Index {
            line: Some(line),
            detail,
        })
        .with_path(name)
    };
    let mut line = Vec::new();
    let mut number = 0u64;
    // Where the last record ends: the next may not start before it.
    let mut end = 0u64;
    loop {
        line.clear();
        let n = (&mut text)
            .take(MAX_LINE)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::from(e).with_path(name))?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        if line.last() != Some(&b'\n') && n as u64 == MAX_LINE {
            return Err(fail(number, format!("a line longer than {MAX_LINE} bytes")));
        }
        let Ok(text_line) = std::str::from_utf8(&line) else {
            return Err(fail(number, "not text".into()));
        };
        let mut fields = text_line.split_ascii_whitespace();
        let (offset, size) = match (fields.next(), fields.next(), fields.next()) {
            (None, ..) => continue,
            (Some(o), Some(s), None) => (o, s),
            _ => {
                let found = text_line.trim();
                return Err(fail(
                    number,
                    format!("expected `offset size` (two numbers), found {found:?}"),
                ));
            }
        };
        let parse = |what: &str, v: &str| {
            v.parse::<u64>().map_err(|_| {
                fail(
                    number,
                    format!("expected the {what} as a decimal number, found {v:?}"),
                )
            })
        };
        let entry = IndexEntry {
            offset: parse("offset", offset)?,
            size: parse("size", size)?,
        };
        if entry.offset < end {
            let o = entry.offset;
            return Err(fail(
                number,
                format!(
                    "offset {o} is before the end of the record on the line before (byte {end})"
                ),
            ));
        }
        end = entry.offset.saturating_add(entry.size);
        each(entry);
    }
}

/// A record file read one record at a time, in any order, through its index: each read is one
/// positioned read of the frame the index names, with its framing and both checksums (as the
/// options say) verified. Reads take `&self`, so threads can share one.
#[derive(Debug)]
pub struct IndexedFile {
    file: File,
    path: Arc<Path>,
    /// The index file, when the index was read from one, to name in errors.
    index_path: Option<PathBuf>,
    index: Index,
    size: u64,
    opts: ReaderOptions,
}

impl IndexedFile {
    /// Opens an uncompressed record file and reads its index file.
    ///
    /// # Errors
    /// Either file cannot be read, the index is malformed, or the options are for a compressed
    /// stream.
    pub fn open(
        path: impl AsRef<Path>,
        index_path: impl AsRef<Path>,
        opts: ReaderOptions,
    ) -> Result<Self> {
        let index_path = index_path.as_ref();
        let index = Index::read(index_path)?;
        let mut file = Self::with_index(path, index, opts)?;
        file.index_path = Some(index_path.to_path_buf());
        Ok(file)
    }

    /// Opens an uncompressed record file with an index already in memory.
    ///
    /// # Errors
    /// The file cannot be opened, or the options are for a compressed stream.
    pub fn with_index(path: impl AsRef<Path>, index: Index, opts: ReaderOptions) -> Result<Self> {
        let path = path.as_ref();
        if opts.get_compression() != Compression::None {
            let detail = "records cannot be read at their offsets in a compressed stream";
            return Err(Error::new(ErrorKind::Unsupported {
                detail: detail.into(),
            })
            .with_path(path));
        }
        let located = |e: io::Error| Error::from(e).with_path(path);
        let file = File::open(path).map_err(located)?;
        let size = file.metadata().map_err(located)?.len();
        Ok(IndexedFile {
            file,
            path: Arc::from(path),
            index_path: None,
            index,
            size,
            opts,
        })
    }

    /// The number of records the index holds.
    pub fn len(&self) -> u64 {
        self.index.len() as u64
    }

    /// Whether the index holds no record.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Reads record `k` (0 for the first) into `buf`, replacing its contents.
    ///
    /// # Errors
    /// `k` past the index; an entry that runs past the end of the file, is larger than the
    /// options' `max_record_len` allows, or disagrees with the frame's length; a checksum
    /// mismatch; I/O errors. Each names the record file, the byte offset and the record index,
    /// and, for a disagreement, the index file.
    pub fn read(&self, k: u64, buf: &mut Vec<u8>) -> Result<()> {
        let located = |e: Error, offset: u64| {
            e.with_path(self.path.to_path_buf())
                .with_offset(offset)
                .with_record(k)
        };
        let entry = usize::try_from(k)
            .ok()
            .and_then(|i| self.index.entries.get(i))
            .copied();
        let Some(IndexEntry { offset, size }) = entry else {
            let n = self.index.len();
            let err = Error::new(ErrorKind::Index {
                line: None,
                detail: format!("record {k} is past the {n} records indexed"),
            });
            return Err(err.with_path(self.path.to_path_buf()).with_record(k));
        };
        let (header, footer) = match self.opts.get_format() {
            Format::TfRecord => (12u64, 4u64),
            Format::OfRecord => (8, 0),
        };
        let max = self
            .opts
            .get_max_record_len()
            .saturating_add(header + footer);
        if size < header + footer || size > max {
            let detail = format!(
                "the index says the frame is {size} bytes, outside {}..={max} for a {} frame",
                header + footer,
                self.opts.get_format().name()
            );
            return Err(located(self.index_error(k, detail), offset));
        }
        let end = offset.saturating_add(size);
        if end > self.size {
            let detail = format!(
                "the index says the frame ends at byte {end}, past the end of the file ({} bytes)",
                self.size
            );
            return Err(located(self.index_error(k, detail), offset));
        }
        // Bounded by `max_record_len`, which the caller chose to allow in memory.
        let n = usize::try_from(size).map_err(|_| {
            located(
                self.index_error(k, format!("{size} bytes do not fit in memory")),
                offset,
            )
        })?;
        buf.clear();
        buf.resize(n, 0);
        read_exact_at(&self.file, buf, offset).map_err(|e| located(e.into(), offset))?;
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&buf[..8]);
        let len = match self.opts.get_format() {
            Format::TfRecord => {
                let stored = u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]);
                let computed = masked_crc32c(&len_bytes);
                if stored != computed {
                    // No frame starts there, or the file is damaged: either way the entry
                    // points at no sound frame, and the error names the index.
                    let detail = format!(
                        "no sound frame starts where the index says: its length checksum does \
                         not match (stored {stored:#010x}, computed {computed:#010x}); the index \
                         or the file is wrong"
                    );
                    return Err(located(self.index_error(k, detail), offset));
                }
                u64::from_le_bytes(len_bytes)
            }
            Format::OfRecord => u64::try_from(i64::from_le_bytes(len_bytes)).unwrap_or(u64::MAX),
        };
        if len != size - header - footer {
            let detail = format!(
                "the index says the frame is {size} bytes; the frame there declares a {len}-byte \
                 payload, a {}-byte frame",
                len.saturating_add(header + footer)
            );
            return Err(located(self.index_error(k, detail), offset));
        }
        // `len` fits: it is `size` less the framing.
        let len = n - (header + footer) as usize;
        let header = header as usize;
        if self.opts.get_format() == Format::TfRecord && self.opts.get_verify_data_crc() {
            let payload = &buf[header..header + len];
            let tail = &buf[header + len..];
            let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
            let computed = masked_crc32c(payload);
            if stored != computed {
                let kind = ErrorKind::Corrupted {
                    what: "data",
                    stored,
                    computed,
                };
                return Err(located(Error::new(kind), offset));
            }
        }
        buf.truncate(header + len);
        buf.drain(..header);
        Ok(())
    }

    /// An error about the index entry of record `k`, naming the index file when the index was
    /// read from one. The entry is named by its record, not by a line: blank lines, which the
    /// index may hold, are no entries.
    fn index_error(&self, k: u64, detail: String) -> Error {
        let detail = match &self.index_path {
            Some(p) => format!(
                "{detail} (the entry of record {k} in index {})",
                p.display()
            ),
            None => format!("{detail} (the entry of record {k})"),
        };
        Error::new(ErrorKind::Index { line: None, detail })
    }
}
