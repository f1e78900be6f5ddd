//! `tfrecord convert`: records re-encoded between containers and compressions.

use std::process::ExitCode;

use tfrecord_core::{Format, ReaderOptions, convert};

use crate::cli::ConvertArgs;
use crate::error::CliResult;
use crate::input::{Flow, RecordType, for_each_record, resolve_all};
use crate::output::RecordSink;

/// `tfrecord convert`.
pub(crate) fn run(args: &ConvertArgs) -> CliResult<ExitCode> {
    let from: Format = args.input_format.into();
    let to: Format = args.write.encoding.output_format.into();
    // Validates `--sequence` against both containers before anything is opened.
    let in_ty = RecordType::for_format(from, args.sequence)?;
    RecordType::for_format(to, args.sequence)?;
    let sources = resolve_all(&args.inputs)?;
    let in_flag = args.input_compression.map(Into::into);
    let mut sink = RecordSink::create(&args.write)?;
    let mut out = Vec::new();
    for source in &sources {
        let opts = ReaderOptions::new()
            .format(from)
            .compression(source.compression(in_flag))
            .verify_data_crc(!args.no_verify_data_crc);
        for_each_record(source, opts, |bytes, loc| {
            if from == to {
                sink.write(bytes)?;
                return Ok(Flow::Continue);
            }
            // The two containers differ by one wrapper and the numbering of the feature kinds:
            // each record is rewritten on the wire, not decoded into maps.
            out.clear();
            let converted = match from {
                Format::TfRecord => {
                    // Checked as the Example decode checks it, so that a SequenceExample's
                    // feature lists are never dropped silently.
                    in_ty.decode_check(bytes, loc)?;
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
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}
