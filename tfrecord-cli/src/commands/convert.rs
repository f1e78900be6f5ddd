//! `tfrecord convert`: records re-encoded between containers and compressions.

use std::process::ExitCode;

use tfrecord_core::{Format, convert};

use crate::cli::{ConvertArgs, ReadOpts};
use crate::dataset;
use crate::error::CliResult;
use crate::input::{Flow, RecordType, resolve_all};
use crate::sharded::RecordOutput;

/// `tfrecord convert`.
pub(crate) fn run(args: &ConvertArgs) -> CliResult<ExitCode> {
    crate::hint::note_compression_is_outputs();
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
    let mut sink = RecordOutput::create(&args.write, args.sharding, args.force)?;
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
