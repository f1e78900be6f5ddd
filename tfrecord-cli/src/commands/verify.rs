//! `tfrecord verify`: the framing and checksums of every record of every file, going on past
//! a failing file.

use std::io::Write;
use std::process::ExitCode;

use crate::cli::VerifyArgs;
use crate::error::{CliResult, report};
use crate::input::{RecordType, for_each_record_parallel, reader_options, resolve};
use crate::stdout::stdout;

/// `tfrecord verify`.
pub(crate) fn run(args: &VerifyArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let mut out = stdout();
    let mut failed = 0usize;
    let mut files = 0usize;
    for arg in &args.files {
        let sources = match resolve(arg) {
            Ok(s) => s,
            Err(e) => {
                files += 1;
                failed += 1;
                writeln!(out, "{}\tFAILED", arg.display())?;
                out.flush()?;
                report(&e);
                continue;
            }
        };
        for source in &sources {
            files += 1;
            let opts = reader_options(&args.read, source, true);
            let res = for_each_record_parallel(source, opts, args.threads.get(), |bytes, loc| {
                if args.decode {
                    ty.check(bytes, loc)?;
                }
                Ok(())
            });
            match res {
                Ok(n) => {
                    let noun = if n == 1 { "record" } else { "records" };
                    writeln!(out, "{}\tOK\t{n} {noun}", source.name().display())?;
                }
                Err(e) if e.is_broken_pipe() => return Err(e),
                Err(e) => {
                    failed += 1;
                    writeln!(out, "{}\tFAILED", source.name().display())?;
                    out.flush()?;
                    report(&e);
                }
            }
        }
    }
    if files > 1 {
        if failed == 0 {
            writeln!(out, "all {files} files intact")?;
        } else {
            writeln!(out, "{failed} of {files} files FAILED")?;
        }
    }
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
