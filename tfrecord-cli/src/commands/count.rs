//! `tfrecord count`: the number of records, per file and in total.

use std::io::Write;
use std::process::ExitCode;

use crate::cli::CountArgs;
use crate::dataset;
use crate::error::CliResult;
use crate::input::{Flow, for_each_record_parallel, reader_options, resolve_all};
use crate::stdout::with_stdout;

/// `tfrecord count`.
pub(crate) fn run(args: &CountArgs) -> CliResult<ExitCode> {
    let sources = resolve_all(&args.files)?;
    with_stdout(|out| {
        if args.dataset.any() {
            // Through the data set flags: one total, read in order on one thread.
            let verify = !args.no_verify_data_crc;
            let n = dataset::for_each(&sources, &args.read, verify, &args.dataset, |_, _| {
                Ok(Flow::Continue)
            })?;
            writeln!(out, "{n}")?;
            return Ok(ExitCode::SUCCESS);
        }
        let mut total = 0u64;
        for source in &sources {
            let opts = reader_options(&args.read, source, !args.no_verify_data_crc);
            let n = for_each_record_parallel(source, opts, args.threads.get(), |_, _| Ok(()))?;
            if sources.len() > 1 {
                writeln!(out, "{}\t{n}", source.name().display())?;
            }
            total += n;
        }
        writeln!(out, "{total}")?;
        Ok(ExitCode::SUCCESS)
    })
}
