//! `tfrecord convert`: records re-encoded between containers and compressions. Feature keys
//! are kept as bytes, so a key that is not UTF-8 (which TensorFlow reads) carries over.

use std::process::ExitCode;

use tfrecord_core::{Format, ReaderOptions};

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
                Decoded::Example(e) => e.to_ofrecord().encode(),
                Decoded::OfRecord(r) => r
                    .to_example(args.allow_lossy_double)
                    .map_err(|e| loc.apply(e))?
                    .encode(),
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
