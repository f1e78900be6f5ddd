//! `tfrecord convert`: records re-encoded between containers and compressions.

use std::process::ExitCode;

use tfrecord_core::proto::{self, tensorflow};
use tfrecord_core::{Format, ReaderOptions, convert};

use crate::cli::ConvertArgs;
use crate::error::{CliError, CliResult};
use crate::input::{Decoded, Flow, RecordType, for_each_record, resolve_all};
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
            let out = match in_ty.decode(bytes, loc)? {
                Decoded::Example(e) => proto::encode_ofrecord(&convert::example_to_ofrecord(&e)),
                Decoded::OfRecord(r) => {
                    let e: tensorflow::Example =
                        convert::ofrecord_to_example(&r, args.allow_lossy_double)
                            .map_err(|e| loc.apply(e))?;
                    proto::encode_example(&e)
                }
                Decoded::SequenceExample(_) => {
                    // Unreachable: `--sequence` with an OFRecord side was refused above.
                    return Err(CliError::Usage(
                        "OFRecord has no sequences; --sequence cannot be converted".into(),
                    ));
                }
            };
            sink.write(&out)?;
            Ok(Flow::Continue)
        })?;
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}
