//! `tfrecord cat`: every record as protobuf text format or as JSON Lines.

use std::io::{self, Write};
use std::process::ExitCode;

use crate::cli::CatArgs;
use crate::error::{CliError, CliResult};
use crate::input::{Flow, RecordType, for_each_record, reader_options, resolve_all};
use crate::stdout::with_stdout;

/// `tfrecord cat`.
pub(crate) fn run(args: &CatArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let sources = resolve_all(&args.files)?;
    let mut left = args.limit.unwrap_or(u64::MAX);
    with_stdout(|out| {
        for source in &sources {
            if left == 0 {
                break;
            }
            let opts = reader_options(&args.read, source, !args.no_verify_data_crc);
            for_each_record(source, opts, |bytes, loc| {
                let record = ty.decode(bytes, loc)?;
                if args.json {
                    let line = serde_json::to_string(&record.to_json())
                        .map_err(|e| CliError::Output(io::Error::other(e)))?;
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(out, "{}", record.to_text())?;
                }
                Ok(Flow::count_down(&mut left))
            })?;
        }
        Ok(ExitCode::SUCCESS)
    })
}
