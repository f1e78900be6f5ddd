//! Inputs: resolving file arguments, opening record readers, decoding payloads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, StdinLock, Write};
use std::path::{Path, PathBuf};

use tfrecord_core::proto::{self, bytes_keys};
use tfrecord_core::{
    Chunk, Compression, Error, Format, Located, ReaderOptions, RecordReader, for_each_chunk,
};
use tfrecord_dataset::Sources;

use crate::cli::ReadOpts;
use crate::error::{CliError, CliResult};
use crate::stdio::{STDIN_NAME, is_dash};

/// One input stream: standard input or a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Standard input (`-` on the command line).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Source {
    /// The name used in messages and per-file output lines.
    pub(crate) fn name(&self) -> PathBuf {
        match self {
            Source::Stdin => PathBuf::from(STDIN_NAME),
            Source::File(p) => p.clone(),
        }
    }

    /// The compression of this input: the flag when given, else guessed from the file name
    /// (none for standard input).
    pub(crate) fn compression(&self, flag: Option<Compression>) -> Compression {
        match (flag, self) {
            (Some(c), _) => c,
            (None, Source::Stdin) => Compression::None,
            (None, Source::File(p)) => Compression::from_path(p),
        }
    }
}

/// Resolves one command-line argument: `-` is standard input; a directory or a glob pattern
/// stands for its record files (`part-*` files, or TensorFlow shards and `*.tfrecord` files, as
/// `tfrecord_dataset::Sources` lists them), the other files of a directory named in a note on
/// standard error; anything else is a file.
///
/// # Errors
/// A path that does not exist, or a directory or pattern without record files.
pub(crate) fn resolve(arg: &Path) -> CliResult<Vec<Source>> {
    if is_dash(arg) {
        return Ok(vec![Source::Stdin]);
    }
    let (files, left_out) = Sources::new().input(arg).resolve_with_left_out()?;
    if !left_out.is_empty() {
        note_left_out(arg, &left_out);
    }
    Ok(files.into_iter().map(|f| Source::File(f.path)).collect())
}

/// Names the files of `arg`'s directories left out because their names are not record file
/// names, and the subdirectories not entered (the first few of many): one may hold records.
fn note_left_out(arg: &Path, left_out: &[PathBuf]) {
    let (dirs, files): (Vec<&PathBuf>, Vec<&PathBuf>) = left_out.iter().partition(|p| p.is_dir());
    let mut err = io::stderr().lock();
    if !files.is_empty() {
        let n = files.len();
        let _ = writeln!(
            err,
            "tfrecord: note: {}: left out {n} file{} not named as record files: {} (name a file \
             to read it whatever its name)",
            arg.display(),
            if n == 1 { "" } else { "s" },
            first_few(&files)
        );
    }
    if !dirs.is_empty() {
        let n = dirs.len();
        let _ = writeln!(
            err,
            "tfrecord: note: {}: left out {n} subdirector{} (not entered): {} (a quoted glob such \
             as '{}' reads the files inside)",
            arg.display(),
            if n == 1 { "y" } else { "ies" },
            first_few(&dirs),
            dirs[0]
                .parent()
                .unwrap_or(arg)
                .join("**")
                .join("part-*")
                .display()
        );
    }
}

/// The first few of `paths`, and how many more.
fn first_few(paths: &[&PathBuf]) -> String {
    const SHOWN: usize = 5;
    let mut names: Vec<String> = paths
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    if paths.len() > SHOWN {
        names.push(format!("and {} more", paths.len() - SHOWN));
    }
    names.join(", ")
}

/// Resolves every argument, in order.
///
/// # Errors
/// The first argument that [`resolve`] rejects.
pub(crate) fn resolve_all(args: &[PathBuf]) -> CliResult<Vec<Source>> {
    let mut out = Vec::new();
    for arg in args {
        out.extend(resolve(arg)?);
    }
    if out.iter().filter(|s| matches!(s, Source::Stdin)).count() > 1 {
        return Err(CliError::Usage(
            "`-` (standard input) is given more than once, and can be read only once".into(),
        ));
    }
    Ok(out)
}

/// Reader options for one source of a reading command.
pub(crate) fn reader_options(
    read: &ReadOpts,
    source: &Source,
    verify_data_crc: bool,
) -> ReaderOptions {
    let flag = read.compression.map(Into::into);
    crate::hint::note_input_format(read.input_format.into());
    ReaderOptions::new()
        .format(read.input_format.into())
        .compression(source.compression(flag))
        .verify_data_crc(verify_data_crc)
        .max_record_len(read.max_record_len)
}

/// A record reader over a file or standard input.
pub(crate) enum AnyReader {
    /// Reading a file.
    File(RecordReader<File>),
    /// Reading standard input.
    Stdin(RecordReader<StdinLock<'static>>),
}

impl AnyReader {
    /// Opens a source with the given options.
    ///
    /// # Errors
    /// When the file cannot be opened; the error names it.
    pub(crate) fn open(source: &Source, opts: ReaderOptions) -> CliResult<Self> {
        Ok(match source {
            Source::Stdin => {
                AnyReader::Stdin(RecordReader::new(io::stdin().lock(), opts).with_path(STDIN_NAME))
            }
            Source::File(p) => AnyReader::File(RecordReader::open(p, opts)?),
        })
    }

    /// Reads the next record, lent from the read buffer when it lies within it (else copied
    /// into `scratch`), with where it was; see [`RecordReader::read_located`].
    ///
    /// # Errors
    /// Framing, checksum and I/O errors, naming file, byte offset and record index.
    pub(crate) fn read_located<'a>(
        &'a mut self,
        scratch: &'a mut Vec<u8>,
    ) -> tfrecord_core::Result<Option<Located<'a>>> {
        match self {
            AnyReader::File(r) => r.read_located(scratch),
            AnyReader::Stdin(r) => r.read_located(scratch),
        }
    }

    /// The byte offset of the next record in the (decompressed) stream.
    pub(crate) fn offset(&self) -> u64 {
        match self {
            AnyReader::File(r) => r.offset(),
            AnyReader::Stdin(r) => r.offset(),
        }
    }

    /// Reports the record the last read returned as skipped under the bad-record policy (one
    /// the command could not use); see [`RecordReader::skip_last`].
    ///
    /// # Errors
    /// `err` when the policy does not skip; the budget's error when it is spent.
    pub(crate) fn skip_last(&mut self, err: Error) -> tfrecord_core::Result<()> {
        match self {
            AnyReader::File(r) => r.skip_last(err),
            AnyReader::Stdin(r) => r.skip_last(err),
        }
    }

    /// How many records have been read so far.
    pub(crate) fn records_read(&self) -> u64 {
        match self {
            AnyReader::File(r) => r.records_read(),
            AnyReader::Stdin(r) => r.records_read(),
        }
    }
}

/// Where a record came from, to locate decode and conversion errors.
#[derive(Clone, Debug)]
pub(crate) struct Location<'a> {
    /// The file (or `<stdin>`).
    pub(crate) path: &'a Path,
    /// The byte offset of the record's frame in the (decompressed) stream.
    pub(crate) offset: u64,
    /// The 0-based index of the record in its file, or in its split when the file is split by
    /// byte range (`split_start`).
    pub(crate) record: u64,
    /// Where the byte range of the record's split starts, when the file is split by byte
    /// range: `record` counts from the split's first record.
    pub(crate) split_start: Option<u64>,
}

impl std::fmt::Display for Location<'_> {
    /// `FILE at byte OFFSET (record INDEX)`, as errors name a record (`record INDEX of the
    /// split starting at byte B` in a byte-range split).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at byte {} (record {}",
            self.path.display(),
            self.offset,
            self.record
        )?;
        if let Some(base) = self.record_base() {
            write!(f, " of the split starting at byte {base}")?;
        }
        f.write_str(")")
    }
}

impl Location<'_> {
    /// A record of a whole file (or of standard input).
    pub(crate) fn in_file(path: &Path, offset: u64, record: u64) -> Location<'_> {
        Location {
            path,
            offset,
            record,
            split_start: None,
        }
    }

    /// Adds this location to an error (keeping any location it already has).
    pub(crate) fn apply(&self, e: Error) -> Error {
        // The base only goes with this location's own record index.
        let own = e.record().is_none_or(|r| r == self.record);
        let e = e
            .with_path(self.path)
            .with_offset(self.offset)
            .with_record(self.record);
        match self.record_base() {
            Some(base) if own => e.with_record_base(base),
            _ => e,
        }
    }

    /// Where `record` counts from in a byte-range split: the split's first record, found again
    /// from the range's start for errors and warnings (once per split: records skipped under a
    /// bad-record policy can be many).
    pub(crate) fn record_base(&self) -> Option<u64> {
        thread_local! {
            static BASES: RefCell<HashMap<(PathBuf, u64), Option<u64>>> =
                RefCell::new(HashMap::new());
        }
        let start = self.split_start?;
        let key = (self.path.to_path_buf(), start);
        if let Some(base) = BASES.with_borrow(|b| b.get(&key).copied()) {
            return base;
        }
        let base = RecordReader::open_range(self.path, start..u64::MAX, ReaderOptions::new())
            .ok()
            .and_then(|r| r.record_base());
        BASES.with_borrow_mut(|b| b.insert(key, base));
        base
    }
}

/// Reads every record of a source, calling `f` with each payload and its location.
///
/// # Errors
/// Framing, checksum and I/O errors of the reader, and whatever `f` returns.
pub(crate) fn for_each_record(
    source: &Source,
    opts: ReaderOptions,
    mut f: impl FnMut(&[u8], &Location<'_>) -> CliResult<Flow>,
) -> CliResult<u64> {
    let name = source.name();
    let mut reader = AnyReader::open(source, opts)?;
    let mut scratch = Vec::new();
    while let Some(record) = reader.read_located(&mut scratch)? {
        let loc = Location::in_file(&name, record.offset, record.index);
        if f(record.payload, &loc)? == Flow::Stop {
            return Ok(reader.records_read());
        }
    }
    Ok(reader.records_read())
}

/// Reads every record of a source on `threads` threads, calling `f` with
/// each payload and its location, in no fixed order; returns how many records there were. With
/// one thread, or from standard input, it is [`for_each_record`], in order.
///
/// # Errors
/// The first in the stream of the reader's framing, checksum and I/O errors and of the errors
/// `f` returns: the error reading on one thread would end with.
pub(crate) fn for_each_record_parallel(
    source: &Source,
    opts: ReaderOptions,
    threads: usize,
    f: impl Fn(&[u8], &Location<'_>) -> CliResult<()> + Sync,
) -> CliResult<u64> {
    let path = match source {
        Source::File(path) if threads != 1 => path,
        _ => {
            return for_each_record(source, opts, |bytes, loc| {
                f(bytes, loc).map(|()| Flow::Continue)
            });
        }
    };
    let each = |n: &mut u64, chunk: &Chunk| -> CliResult<()> {
        let mut records = chunk.records();
        loop {
            let (offset, record) = (records.offset(), records.records_read());
            let Some(bytes) = records.next_record()? else {
                return Ok(());
            };
            f(bytes, &Location::in_file(path, offset, record))?;
            *n += 1;
        }
    };
    let counts = for_each_chunk(path, opts, threads, || 0u64, each, Ok)?;
    Ok(counts.iter().sum())
}

/// Whether [`for_each_record`] goes on after a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read the next record.
    Continue,
    /// Stop reading this source.
    Stop,
}

/// Which protobuf message a record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordType {
    /// `tensorflow.Example`.
    Example,
    /// `tensorflow.SequenceExample`.
    SequenceExample,
    /// `oneflow.OFRecord`.
    OfRecord,
}

impl RecordType {
    /// The message type a container holds: OFRecord holds `oneflow.OFRecord`; TFRecord holds
    /// `tensorflow.Example`, or `tensorflow.SequenceExample` with `--sequence`.
    ///
    /// # Errors
    /// `--sequence` with OFRecord, which has no sequences.
    pub(crate) fn for_format(format: Format, sequence: bool) -> CliResult<Self> {
        match (format, sequence) {
            (Format::TfRecord, false) => Ok(RecordType::Example),
            (Format::TfRecord, true) => Ok(RecordType::SequenceExample),
            (Format::OfRecord, false) => Ok(RecordType::OfRecord),
            (Format::OfRecord, true) => Err(CliError::Usage(
                "--sequence reads tensorflow.SequenceExample, which only TFRecord files hold \
                 (OFRecord has no sequences)"
                    .into(),
            )),
        }
    }

    /// The full protobuf name.
    pub(crate) fn message_name(self) -> &'static str {
        match self {
            RecordType::Example => "tensorflow.Example",
            RecordType::SequenceExample => "tensorflow.SequenceExample",
            RecordType::OfRecord => "oneflow.OFRecord",
        }
    }

    /// Decodes a payload. Feature keys are bytes, as TensorFlow reads them: a key that is
    /// not UTF-8 does not make the record invalid.
    ///
    /// # Errors
    /// A payload that is not a valid message of this type; the error names the file, byte
    /// offset and record index.
    pub(crate) fn decode(self, bytes: &[u8], loc: &Location<'_>) -> Result<Decoded, Error> {
        self.decode_check(bytes, loc)?;
        let res = match self {
            RecordType::Example => bytes_keys::Example::decode(bytes).map(Decoded::Example),
            RecordType::SequenceExample => {
                bytes_keys::SequenceExample::decode(bytes).map(Decoded::SequenceExample)
            }
            RecordType::OfRecord => bytes_keys::OfRecord::decode(bytes).map(Decoded::OfRecord),
        };
        res.map_err(|e| loc.apply(e))
    }
}

impl RecordType {
    /// Checks that `bytes` decode as this type, as [`decode`](RecordType::decode) would, without
    /// building the message (no allocation per feature).
    ///
    /// # Errors
    /// What [`decode`](RecordType::decode) refuses.
    pub(crate) fn check(self, bytes: &[u8], loc: &Location<'_>) -> Result<(), Error> {
        self.decode_check(bytes, loc)?;
        match self {
            RecordType::Example => proto::check_example(bytes),
            RecordType::SequenceExample => proto::check_sequence_example(bytes),
            RecordType::OfRecord => proto::check_ofrecord(bytes),
        }
        .map_err(|e| loc.apply(e))
    }

    /// Refuses a record that this type's decode would read with loss: a SequenceExample's
    /// feature lists, read as an Example, would be dropped silently.
    pub(crate) fn decode_check(self, bytes: &[u8], loc: &Location<'_>) -> Result<(), Error> {
        if self == RecordType::Example {
            refuse_feature_lists(bytes, loc, "read it with --sequence")?;
        }
        Ok(())
    }
}

/// Refuses a record read as a `tf.train.Example` that holds feature lists (a
/// `tf.train.SequenceExample`), whose lists the read would drop; `fix` says what to do.
pub(crate) fn refuse_feature_lists(
    bytes: &[u8],
    loc: &Location<'_>,
    fix: &str,
) -> Result<(), Error> {
    if proto::has_feature_lists(bytes) {
        return Err(loc.apply(Error::decode(
            RecordType::Example.message_name(),
            format!(
                "the record holds feature_lists: it is a tensorflow.SequenceExample, whose \
                 feature lists an Example read would drop; {fix}"
            ),
        )));
    }
    Ok(())
}

/// A decoded record, its feature keys as bytes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decoded {
    /// A `tensorflow.Example`.
    Example(bytes_keys::Example),
    /// A `tensorflow.SequenceExample`.
    SequenceExample(bytes_keys::SequenceExample),
    /// A `oneflow.OFRecord`.
    OfRecord(bytes_keys::OfRecord),
}

impl Decoded {
    /// The protobuf text format, as `text_format.MessageToString` writes it (without the newline
    /// `print` adds); a key that is not UTF-8 is escaped as the text format escapes bytes.
    pub(crate) fn to_text(&self) -> String {
        match self {
            Decoded::Example(e) => e.to_text(),
            Decoded::SequenceExample(e) => e.to_text(),
            Decoded::OfRecord(r) => r.to_text(),
        }
    }

    /// Appends the canonical proto3 JSON mapping to `out`, written in one pass; a key that is
    /// not UTF-8 in its text format escape.
    ///
    /// # Errors
    /// A key that is not UTF-8 whose escaped form is also a key of the same map.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        match self {
            Decoded::Example(e) => e.write_json(out),
            Decoded::SequenceExample(e) => e.write_json(out),
            Decoded::OfRecord(r) => r.write_json(out),
        }
    }

    /// The first feature key (context features before feature lists) that is not UTF-8.
    pub(crate) fn non_utf8_key(&self) -> Option<&[u8]> {
        let not_utf8 = |k: &&[u8]| std::str::from_utf8(k).is_err();
        match self {
            Decoded::Example(e) => e.keys().find(not_utf8),
            Decoded::SequenceExample(e) => e.keys().find(not_utf8),
            Decoded::OfRecord(r) => r.keys().find(not_utf8),
        }
    }
}
