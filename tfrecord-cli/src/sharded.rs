//! Where written records go: one file (or standard output), or a set of shards named as
//! TensorFlow or OneFlow name them (`convert` and `from-parquet`).

use tfrecord_core::{Compression, Format, WriterOptions};
use tfrecord_dataset::{ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions};

use crate::cli::{ShardOpts, WriteOpts};
use crate::error::{CliError, CliResult};
use crate::output::{RecordSink, check_overwrite, names_directory, note_removed};
use crate::stdio::is_dash;

/// Where written records go: one file (or standard output), or a set of shards.
pub(crate) enum RecordOutput {
    /// One file, or standard output.
    One(RecordSink),
    /// Shards, renamed into place together at the end.
    Shards(ShardedWriter),
}

impl RecordOutput {
    /// Opens the output the flags describe, refusing to write over an existing one without
    /// `--force`.
    pub(crate) fn create(write: &WriteOpts, sharding: ShardOpts, force: bool) -> CliResult<Self> {
        let format: Format = write.encoding.output_format.into();
        // OFRecord into a directory: OneFlow's `part-NNNNN` files, one unless asked for more.
        let parts = format == Format::OfRecord && names_directory(&write.output);
        let split = match (sharding.shards, sharding.max_records_per_shard) {
            (Some(n), _) => Some(ShardSplit::RoundRobin(n)),
            (None, Some(k)) => Some(ShardSplit::Records(k)),
            (None, None) if parts => Some(ShardSplit::RoundRobin(1)),
            (None, None) => None,
        };
        Self::create_split(write, split, parts, force)
    }

    /// Opens one output file (`split` `None`), or shards split so, named as OneFlow's `part-*`
    /// files in the directory `-o` names when `parts`, else as TensorFlow's shards of its name;
    /// an existing output is refused without `--force`.
    pub(crate) fn create_split(
        write: &WriteOpts,
        split: Option<ShardSplit>,
        parts: bool,
        force: bool,
    ) -> CliResult<Self> {
        let dest = &write.output;
        let enc = &write.encoding;
        let format: Format = enc.output_format.into();
        let Some(split) = split else {
            check_overwrite(dest, force)?;
            return Ok(RecordOutput::One(RecordSink::create(write)?));
        };
        if is_dash(dest) {
            return Err(CliError::Usage(
                "--shards and --max-records-per-shard write files: give -o a file name".into(),
            ));
        }
        let compression = enc
            .compression
            .map_or_else(|| Compression::from_path(dest), Into::into);
        if parts && compression != Compression::None {
            return Err(CliError::Usage(format!(
                "OneFlow's part-NNNNN files are uncompressed, and a compressed part would not \
                 read back as one: leave out --compression {}",
                compression.name()
            )));
        }
        let writer = WriterOptions::new()
            .format(format)
            .compression(compression)
            .level(enc.level);
        let naming = if parts {
            ShardNaming::OneFlow(dest.clone())
        } else {
            ShardNaming::TensorFlow(dest.clone())
        };
        let opts = ShardedWriterOptions::new(naming, split)
            .format(format)
            .writer(writer)
            .sync(true)
            .overwrite(force);
        let ShardSplit::RoundRobin(n) = split else {
            return Ok(RecordOutput::Shards(ShardedWriter::create(opts)?));
        };
        // Records are dealt to the shards in turn, so every shard is open at once.
        let limit = room_for_open_files(n);
        let too_many = |l: u64| {
            format!(
                "--shards {n} keeps {n} files open at once, and this process may open {l} (the \
                 hard limit of open files, `ulimit -Hn`): write fewer shards, or shards of a \
                 record count (--max-records-per-shard, one file open at a time), or raise the \
                 limit"
            )
        };
        // Refused before any file is made when the shards alone cannot be open at once.
        if let Some(l) = limit.filter(|&l| l < n) {
            return Err(CliError::Failed(too_many(l)));
        }
        match ShardedWriter::create(opts) {
            Ok(w) => Ok(RecordOutput::Shards(w)),
            Err(e) if limit.is_some_and(|l| l < n.saturating_add(OTHER_FILES)) => Err(
                CliError::Failed(format!("{e}\n{}", too_many(limit.unwrap_or_default()))),
            ),
            Err(e) => Err(e.into()),
        }
    }

    /// Writes one record.
    pub(crate) fn write(&mut self, record: &[u8]) -> CliResult<()> {
        match self {
            RecordOutput::One(sink) => sink.write(record),
            RecordOutput::Shards(w) => Ok(w.write(record)?),
        }
    }

    /// Completes the output: the file or every shard renamed into place.
    pub(crate) fn finish(self) -> CliResult<()> {
        match self {
            RecordOutput::One(sink) => sink.finish().map(drop),
            RecordOutput::Shards(w) => {
                let done = w.finish_report()?;
                note_removed(&done.removed);
                Ok(())
            }
        }
    }
}

/// Files a command may hold open besides round-robin shards: standard streams, an input, and
/// what the runtime keeps.
const OTHER_FILES: u64 = 32;

/// Raises the soft limit of open files (as far as the hard limit allows) for `shards` files
/// open at once besides the others; the limit it is at now (`None` where there is none to ask).
fn room_for_open_files(shards: u64) -> Option<u64> {
    #[cfg(unix)]
    {
        rlimit::increase_nofile_limit(shards.saturating_add(OTHER_FILES)).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = shards;
        None
    }
}
