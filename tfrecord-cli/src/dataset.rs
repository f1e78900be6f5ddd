//! The data set flags every reading command takes (`--limit`, `--skip`, `--shard`,
//! `--shuffle --seed`, `--max-bad-records`, `--resync`), and reading the records of all inputs
//! through them.
//!
//! Without `--shard` or `--shuffle` the inputs are read in order, one reader at a time; with
//! either, through `tfrecord-dataset` (shards dealt by file, or by byte range of uncompressed
//! TFRecord files when there are fewer files than shards; a shuffle of the file order and a
//! buffer of 10,000 records, from the seed). `--skip` and `--limit` come after both, as
//! tf.data's `shard().shuffle().skip().take()`. Damage skipped under `--max-bad-records` /
//! `--resync` is reported on standard error as it is met, one line each (`skipped`, the file,
//! the byte offset), with a total at the end. On a terminal, a progress bar (bytes, records per
//! second, time left) and a one-line summary at the end show on standard error; nothing when it
//! is piped or logged.

use std::io::{self, IsTerminal, Write};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use clap::Args;
use tfrecord_core::{BadRecords, ReaderOptions, Skipped};
use tfrecord_dataset::{Dataset, DatasetOptions, Shuffle, SourceFile};

use crate::cli::ReadOpts;
use crate::error::{CliError, CliResult};
use crate::input::{AnyReader, Flow, Location, Source, reader_options};

/// How many records `--shuffle` holds to draw from, as a tf.data `shuffle(10000)`.
const SHUFFLE_BUFFER: usize = 10_000;

/// The data set flags of a reading command.
#[derive(Clone, Debug, Default, Args)]
pub(crate) struct DatasetArgs {
    /// Read at most N records (over all inputs, after --skip, --shard and --shuffle).
    #[arg(short = 'n', long, value_name = "N")]
    pub(crate) limit: Option<u64>,
    /// Leave out the first N records (after --shard and --shuffle).
    #[arg(long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Read shard I of N (0 <= I < N): the N shards together hold every record exactly once,
    /// whatever seed each shuffles with. Files are dealt whole; with fewer files than shards,
    /// uncompressed TFRecord files are split by byte range (compressed files by file).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<(usize, usize)>,
    /// Read in a random order: the files shuffled, then the records through a buffer of 10,000
    /// (tf.data's `shuffle`). The same --seed gives the same order.
    #[arg(long)]
    pub(crate) shuffle: bool,
    /// The seed of --shuffle (default 0).
    #[arg(long, value_name = "S", requires = "shuffle")]
    pub(crate) seed: Option<u64>,
    /// Skip damaged records, at most N (a record whose data checksum fails, or that does not
    /// decode as a message of its type; with --resync also broken framing and garbage): each
    /// is reported on standard error with the file and the byte offset, and the command
    /// succeeds if no more than N were skipped. Under it, `parse` and `to-parquet` check each
    /// whole record, so that a damaged one is skipped rather than end the batch; without it
    /// they read, as TensorFlow's parser does, only the features the spec names, and damage
    /// elsewhere in a record passes.
    #[arg(long, value_name = "N")]
    pub(crate) max_bad_records: Option<u64>,
    /// After broken framing (a bad length, a truncation, garbage between records) scan forward
    /// to the next sound record instead of stopping; the skipped byte range is reported.
    /// Without --max-bad-records, any number may be skipped. OFRecord frames carry no
    /// checksum, so no frame can be told from garbage: in an OFRecord file, broken framing
    /// skips the rest of the file (reported as one byte range, its records uncounted).
    #[arg(long)]
    pub(crate) resync: bool,
}

/// `I/N` with `I < N`.
pub(crate) fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("expected I/N (such as 0/4), found {s:?}"))?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|e| format!("shard index {i:?}: {e}"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|e| format!("shard count {n:?}: {e}"))?;
    if n == 0 || i >= n {
        return Err(format!("expected 0 <= I < N, found {i}/{n}"));
    }
    Ok((i, n))
}

impl DatasetArgs {
    /// The bad-record policy of the flags, with one log of every reader's skips.
    pub(crate) fn policy(&self) -> BadRecords {
        let max = self.max_bad_records.unwrap_or(u64::MAX);
        let policy = match (self.resync, self.max_bad_records) {
            (true, _) => BadRecords::resync(max),
            (false, Some(_)) => BadRecords::skip(max),
            (false, None) => return BadRecords::fail(),
        };
        policy.shared_log()
    }

    /// Whether the inputs are read through a data set (shards or a shuffle).
    fn reorders(&self) -> bool {
        self.shard.is_some() || self.shuffle
    }

    /// Whether the flags choose which records are read, over all inputs together (`--limit`,
    /// `--skip`, `--shard`, `--shuffle`).
    pub(crate) fn selects(&self) -> bool {
        self.reorders() || self.limit.is_some() || self.skip.is_some()
    }

    /// Whether any flag asks for more than reading every record in order.
    pub(crate) fn any(&self) -> bool {
        self.reorders()
            || self.limit.is_some()
            || self.skip.is_some()
            || self.max_bad_records.is_some()
            || self.resync
    }
}

/// Prints `skipped` on standard error, one line each, and adds them to the totals.
fn report(skipped: Vec<Skipped>, totals: &mut Totals) {
    if skipped.is_empty() {
        return;
    }
    // One write for the lines of a call, not one per line (standard error is unbuffered).
    let mut err = io::BufWriter::new(io::stderr().lock());
    for s in skipped {
        let _ = writeln!(err, "tfrecord: {s}");
        totals.add(&s);
    }
    let _ = err.flush();
}

/// What was skipped over the whole command.
#[derive(Default)]
pub(crate) struct Totals {
    records: u64,
    /// Byte ranges of known length that are not one record.
    ranges: u64,
    bytes: u64,
    /// Skips of unknown length: the rest of a damaged compressed stream.
    to_end: u64,
    /// How many skips each file had, by its name.
    by_file: std::collections::HashMap<std::path::PathBuf, u64>,
}

impl Totals {
    fn add(&mut self, s: &Skipped) {
        match (s.is_record(), s.byte_len()) {
            (true, _) => self.records += 1,
            (false, Some(_)) => self.ranges += 1,
            (false, None) => self.to_end += 1,
        }
        self.bytes += s.byte_len().unwrap_or(0);
        if let Some(path) = s.path() {
            *self.by_file.entry(path.to_path_buf()).or_default() += 1;
        }
    }

    /// How many skips were reported in `path`.
    pub(crate) fn in_file(&self, path: &std::path::Path) -> u64 {
        self.by_file.get(path).copied().unwrap_or(0)
    }

    /// The closing line, when anything was skipped. It does not say `skipped`: each skip has
    /// a line of its own with that word, the file and the offset, and this one names neither.
    pub(crate) fn finish(&self) {
        let mut parts = Vec::new();
        if self.records > 0 {
            parts.push(format!("{} damaged record(s)", self.records));
        }
        if self.ranges > 0 {
            parts.push(format!("{} damaged byte range(s)", self.ranges));
        }
        if self.to_end > 0 {
            parts.push(format!(
                "the rest of {} damaged compressed stream(s)",
                self.to_end
            ));
        }
        if parts.is_empty() {
            return;
        }
        let bytes = if self.bytes > 0 {
            format!(" ({} bytes)", self.bytes)
        } else {
            String::new()
        };
        let _ = writeln!(
            io::stderr().lock(),
            "tfrecord: in all, passed over {}{bytes}",
            parts.join(" and ")
        );
    }
}

/// A progress bar over the inputs' bytes and a closing summary, on a terminal only.
/// A progress bar of `total()` units drawn with `template`, when standard error is a terminal
/// (the total is only worked out then).
fn terminal_bar(total: impl FnOnce() -> u64, template: &str) -> Option<ProgressBar> {
    io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(Some(total()), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar
    })
}

/// What a reading shows on a terminal: a bar of the bytes read (or of the rows written, for
/// `from-parquet`), and a summary line at the end.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    records: u64,
    bytes: u64,
    /// Counting rows of a table (the bar's length is the rows) rather than records read.
    rows: bool,
}

impl Progress {
    /// A bar over `total` rows written as records (`from-parquet`).
    pub(crate) fn rows(total: u64) -> Self {
        Self::items(total, "rows")
    }

    /// A bar over `total` items of `unit` (`rows`, `images`), each written as a record.
    pub(crate) fn items(total: u64, unit: &str) -> Self {
        Progress {
            bar: terminal_bar(
                || total,
                &format!("{{spinner}} {{wide_bar}} {{pos}}/{{len}} {unit} {{per_sec}} ({{eta}})"),
            ),
            started: Instant::now(),
            records: 0,
            bytes: 0,
            rows: true,
        }
    }

    /// `n` more rows.
    pub(crate) fn add_rows(&mut self, n: u64) {
        self.records += n;
        if let Some(bar) = &self.bar {
            bar.set_position(self.records);
        }
    }

    fn new(sources: &[Source]) -> Self {
        let bytes = || {
            sources
                .iter()
                .filter_map(|s| match s {
                    Source::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
                    Source::Stdin => None,
                })
                .sum()
        };
        Progress {
            bar: terminal_bar(
                bytes,
                "{spinner} {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} {msg} ({eta})",
            ),
            started: Instant::now(),
            records: 0,
            bytes: 0,
            rows: false,
        }
    }

    /// One more record; `bytes` of input read so far.
    fn record(&mut self, bytes: u64) {
        self.records += 1;
        self.bytes = bytes;
        if let Some(bar) = &self.bar
            && self.records.is_multiple_of(1024)
        {
            bar.set_position(bytes.min(bar.length().unwrap_or(u64::MAX)));
            bar.set_message(format!("{} records", self.records));
        }
    }

    /// Clears the bar and prints the summary line (on a terminal, as the bar).
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            let bytes = self.bytes;
            bar.finish_and_clear();
            let secs = self.started.elapsed().as_secs_f64();
            #[allow(clippy::cast_precision_loss)]
            let rate = self.records as f64 / secs.max(1e-9);
            let n = self.records;
            let line = if self.rows {
                format!("tfrecord: {n} rows written, in {secs:.2} s ({rate:.0} rows/s)")
            } else {
                format!(
                    "tfrecord: {n} records read, {bytes} bytes of input, in {secs:.2} s \
                     ({rate:.0} records/s)"
                )
            };
            let _ = writeln!(io::stderr().lock(), "{line}");
        }
    }
}

/// How a reading reports what it skips.
pub(crate) enum Report<'t> {
    /// Each skip on its own line, and a total at the end.
    Lines,
    /// Each skip on its own line, counted into the caller's total (readings under one budget).
    Into(&'t mut Totals),
    /// Nothing: a second pass over inputs whose first pass reported what they hold.
    Quiet,
}

/// One command's reading: its flags, policy and what it reports.
struct Reading<'a, 't> {
    read: &'a ReadOpts,
    verify_data_crc: bool,
    ds: &'a DatasetArgs,
    policy: BadRecords,
    report: Report<'t>,
    totals: Totals,
    progress: Progress,
}

impl Reading<'_, '_> {
    /// Prints the skips logged since the last call.
    fn report(&mut self) {
        let skipped = self.policy.take_logged();
        match &mut self.report {
            Report::Lines => report(skipped, &mut self.totals),
            Report::Into(totals) => report(skipped, totals),
            Report::Quiet => {}
        }
    }

    /// The end of the reading: what was skipped, and the summaries.
    fn finish(&mut self) {
        self.report();
        self.progress.finish();
        if matches!(self.report, Report::Lines) {
            self.totals.finish();
        }
    }
}

/// Reads the records of every source through the data set flags, calling `f` with each
/// payload and its location; returns how many records `f` was given.
///
/// # Errors
/// Framing, checksum and I/O errors (past the bad-record budget), misused flags, and whatever
/// `f` returns.
pub(crate) fn for_each(
    sources: &[Source],
    read: &ReadOpts,
    verify_data_crc: bool,
    ds: &DatasetArgs,
    f: impl FnMut(&[u8], &Location<'_>) -> CliResult<Flow>,
) -> CliResult<u64> {
    let policy = ds.policy();
    read_with(policy, Report::Lines, sources, read, verify_data_crc, ds, f)
}

/// As [`for_each`], under `policy` (from [`DatasetArgs::policy`], shared by several
/// readings for one bad-record budget, what each skipped counted by its
/// [`spent`](BadRecords::spent)), reporting skips as `report` says.
pub(crate) fn read_with(
    policy: BadRecords,
    report: Report<'_>,
    sources: &[Source],
    read: &ReadOpts,
    verify_data_crc: bool,
    ds: &DatasetArgs,
    mut f: impl FnMut(&[u8], &Location<'_>) -> CliResult<Flow>,
) -> CliResult<u64> {
    let mut r = Reading {
        read,
        verify_data_crc,
        ds,
        policy,
        report,
        totals: Totals::default(),
        progress: Progress::new(sources),
    };
    let res = if ds.reorders() {
        through_dataset(sources, &mut r, &mut f)
    } else {
        in_order(sources, &mut r, &mut f)
    };
    r.finish();
    res
}

/// The inputs one after the other, `--skip` and `--limit` counted over all of them.
fn in_order(
    sources: &[Source],
    r: &mut Reading<'_, '_>,
    f: &mut impl FnMut(&[u8], &Location<'_>) -> CliResult<Flow>,
) -> CliResult<u64> {
    let mut skip = r.ds.skip.unwrap_or(0);
    let mut left = r.ds.limit.unwrap_or(u64::MAX);
    let mut given = 0u64;
    let mut done = 0u64;
    for source in sources {
        if left == 0 {
            break;
        }
        let opts = reader_options(r.read, source, r.verify_data_crc).bad_records(r.policy.clone());
        let name = source.name();
        let mut reader = AnyReader::open(source, opts)?;
        let mut scratch = Vec::new();
        loop {
            let read = reader.read_located(&mut scratch);
            r.report();
            let Some(record) = read? else {
                break;
            };
            r.progress.record(done + record.end);
            if skip > 0 {
                skip -= 1;
                continue;
            }
            // Records skipped whole count too: the index is the reader's.
            let loc = Location::in_file(&name, record.offset, record.index);
            match f(record.payload, &loc) {
                Ok(flow) => {
                    given += 1;
                    left -= 1;
                    if flow == Flow::Stop || left == 0 {
                        return Ok(given);
                    }
                }
                // A record the command cannot use (one that does not decode) is damage too:
                // skipped and reported under a policy that skips, else the error.
                Err(CliError::Core(e))
                    if r.policy.skips() && !e.is_io(io::ErrorKind::BrokenPipe) =>
                {
                    reader.skip_last(e)?;
                    r.report();
                }
                Err(e) => return Err(e),
            }
        }
        done += reader.offset();
    }
    Ok(given)
}

/// The inputs as a `tfrecord-dataset` data set: shards, shuffle, skip and take.
fn through_dataset(
    sources: &[Source],
    r: &mut Reading<'_, '_>,
    f: &mut impl FnMut(&[u8], &Location<'_>) -> CliResult<Flow>,
) -> CliResult<u64> {
    let flag = r.read.compression.map(Into::into);
    let mut files = Vec::new();
    for source in sources {
        match source {
            Source::File(path) => files.push(SourceFile {
                path: path.clone(),
                format: r.read.input_format.into(),
                compression: source.compression(flag),
            }),
            Source::Stdin => {
                return Err(CliError::Usage(
                    "--shard and --shuffle read files: standard input cannot be sharded or \
                     shuffled"
                        .into(),
                ));
            }
        }
    }
    let reader = ReaderOptions::new()
        .verify_data_crc(r.verify_data_crc)
        .max_record_len(r.read.max_record_len)
        .bad_records(r.policy.clone());
    let mut opts = DatasetOptions::new().reader(reader).threads(1);
    if let Some((i, n)) = r.ds.shard {
        opts = opts.shard(i, n);
    }
    if r.ds.shuffle {
        let seed = r.ds.seed.unwrap_or(0);
        opts = opts.shuffle(Shuffle::new(seed).buffer_size(SHUFFLE_BUFFER));
    }
    if let Some(n) = r.ds.skip {
        opts = opts.skip(n);
    }
    if let Some(n) = r.ds.limit {
        opts = opts.take(n);
    }
    let records = Dataset::from_files(files).with_options(opts).records()?;
    let mut given = 0u64;
    let mut done = 0u64;
    for rec in records {
        r.report();
        let rec = rec?;
        done += rec.bytes().len() as u64 + 16;
        r.progress.record(done);
        let loc = Location {
            path: rec.path(),
            offset: rec.offset(),
            record: rec.index(),
            split_start: rec.split_start(),
        };
        let flow = match f(rec.bytes(), &loc) {
            Ok(flow) => flow,
            // A record the command cannot use (one that does not decode) is damage too:
            // skipped and reported under a policy that skips, as when reading in order.
            Err(CliError::Core(e)) if r.policy.skips() && !e.is_io(io::ErrorKind::BrokenPipe) => {
                let format: tfrecord_core::Format = r.read.input_format.into();
                let frame = rec.bytes().len() as u64 + format.frame_overhead();
                let at = (rec.offset(), rec.index());
                r.policy
                    .skip_undecodable(Some(rec.path()), at.0, frame, at.1, e)?;
                r.report();
                continue;
            }
            Err(e) => return Err(e),
        };
        given += 1;
        if flow == Flow::Stop {
            break;
        }
    }
    Ok(given)
}
