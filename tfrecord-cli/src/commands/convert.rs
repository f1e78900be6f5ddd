//! `tfrecord convert`: records re-encoded between containers and compressions.

use std::process::ExitCode;

use tfrecord_core::{Compression, Format, WriterOptions, convert};
use tfrecord_dataset::{ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions};

use crate::cli::{ConvertArgs, ReadOpts};
use crate::dataset;
use crate::error::{CliError, CliResult};
use crate::input::{Flow, RecordType, Source, is_dash, resolve_all};
use crate::output::{RecordSink, check_overwrite, note_removed};

/// Where converted records go: one file (or standard output), or a set of shards.
enum Output {
    One(RecordSink),
    Shards(ShardedWriter),
}

impl Output {
    /// Opens the output the flags describe, refusing to write over an existing one without
    /// `--force`.
    fn create(args: &ConvertArgs, sources: &[Source]) -> CliResult<Self> {
        let dest = &args.write.output;
        let enc = &args.write.encoding;
        let format: Format = enc.output_format.into();
        // OFRecord into a directory: OneFlow's `part-NNNNN` files, one unless asked for more.
        let parts = format == Format::OfRecord && names_directory(dest);
        let split = match (args.shards, args.max_records_per_shard) {
            (Some(n), _) => Some(ShardSplit::RoundRobin(n)),
            (None, Some(k)) => Some(ShardSplit::Records(k)),
            (None, None) if parts => Some(ShardSplit::RoundRobin(1)),
            (None, None) => None,
        };
        let Some(split) = split else {
            check_overwrite(dest, args.force, sources.iter().map(Source::name))?;
            return Ok(Output::One(RecordSink::create(&args.write)?));
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
            .overwrite(args.force);
        Ok(Output::Shards(ShardedWriter::create(opts)?))
    }

    fn write(&mut self, record: &[u8]) -> CliResult<()> {
        match self {
            Output::One(sink) => sink.write(record),
            Output::Shards(w) => Ok(w.write(record)?),
        }
    }

    fn finish(self) -> CliResult<()> {
        match self {
            Output::One(sink) => sink.finish().map(drop),
            Output::Shards(w) => {
                let done = w.finish_report()?;
                note_removed(&done.removed);
                Ok(())
            }
        }
    }
}

/// Whether `path` names a directory: an existing one, or a name ending with a separator.
fn names_directory(path: &std::path::Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    path.is_dir() || text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR)
}

/// `tfrecord convert`.
pub(crate) fn run(args: &ConvertArgs) -> CliResult<ExitCode> {
    let from: Format = args.input_format.into();
    let to: Format = args.write.encoding.output_format.into();
    // Validates `--sequence` against both containers before anything is opened.
    let in_ty = RecordType::for_format(from, args.sequence)?;
    RecordType::for_format(to, args.sequence)?;
    let sources = resolve_all(&args.inputs)?;
    let read = ReadOpts {
        input_format: args.input_format,
        compression: args.input_compression,
        max_record_len: args.max_record_len,
    };
    let mut sink = Output::create(args, &sources)?;
    let mut out = Vec::new();
    let verify = !args.no_verify_data_crc;
    dataset::for_each(&sources, &read, verify, &args.dataset, |bytes, loc| {
        if from == to {
            sink.write(bytes)?;
            return Ok(Flow::Continue);
        }
        // The two containers differ by one wrapper and the numbering of the feature kinds:
        // each record is rewritten on the wire, not decoded into maps.
        out.clear();
        let converted = match from {
            Format::TfRecord => {
                // A SequenceExample's feature lists are never dropped silently: OFRecord has
                // no place for them.
                if tfrecord_core::proto::has_feature_lists(bytes) {
                    return Err(loc
                        .apply(tfrecord_core::Error::decode(
                            in_ty.message_name(),
                            "the record holds feature_lists: it is a tensorflow.SequenceExample, \
                             and OFRecord has no sequences to hold them, so it cannot be \
                             converted to OFRecord",
                        ))
                        .into());
                }
                convert::example_to_ofrecord_bytes(bytes, &mut out)
            }
            Format::OfRecord => {
                convert::ofrecord_to_example_bytes(bytes, args.allow_lossy_double, &mut out)
            }
        };
        converted.map_err(|e| loc.apply(e))?;
        sink.write(&out)?;
        Ok(Flow::Continue)
    })?;
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}
