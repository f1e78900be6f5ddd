//! `tfrecord verify`: the framing and checksums of every record of every file, going on past
//! a failing file.

use std::io::Write;
use std::process::ExitCode;

use crate::cli::VerifyArgs;
use crate::dataset::{self, Report};
use crate::error::{CliError, CliResult, report};
use crate::input::{Flow, Location, RecordType, for_each_record_parallel, reader_options, resolve};
use crate::stdout::stdout;

/// `tfrecord verify`.
pub(crate) fn run(args: &VerifyArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let mut out = stdout();
    let mut failed = 0usize;
    let mut damaged = 0usize;
    let mut files = 0usize;
    // One bad-record budget over every file, as the other commands have.
    let policy = args.dataset.policy();
    let mut skipped = dataset::Totals::default();
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
            let spent = policy.spent();
            let check = |bytes: &[u8], loc: &Location<'_>| -> CliResult<()> {
                if args.decode {
                    ty.check(bytes, loc)?;
                }
                Ok(())
            };
            let res = if args.dataset.any() {
                // Damaged records skipped within the budget, --limit, --skip: in order, on one
                // thread, each file on its own.
                dataset::read_with(
                    policy.clone(),
                    Report::Into(&mut skipped),
                    std::slice::from_ref(source),
                    &args.read,
                    true,
                    &args.dataset,
                    |b, l| check(b, l).map(|()| Flow::Continue),
                )
            } else {
                let opts = reader_options(&args.read, source, true);
                for_each_record_parallel(source, opts, args.threads.get(), check)
            };
            match res {
                Ok(n) => {
                    let noun = if n == 1 { "record" } else { "records" };
                    let skipped = policy.spent() - spent;
                    if skipped == 0 {
                        writeln!(out, "{}\tOK\t{n} {noun}", source.name().display())?;
                    } else {
                        damaged += 1;
                        writeln!(
                            out,
                            "{}\tDAMAGED\t{n} {noun}, {skipped} damaged record(s) or byte \
                             range(s) skipped",
                            source.name().display()
                        )?;
                    }
                }
                // A misused command line is not a verdict on the file.
                Err(e) if e.is_broken_pipe() || matches!(e, CliError::Usage(_)) => return Err(e),
                Err(e) => {
                    failed += 1;
                    writeln!(out, "{}\tFAILED", source.name().display())?;
                    out.flush()?;
                    report(&e);
                }
            }
        }
    }
    skipped.finish();
    if files > 1 {
        if failed > 0 {
            writeln!(out, "{failed} of {files} files FAILED")?;
        } else if damaged > 0 {
            writeln!(
                out,
                "{damaged} of {files} files DAMAGED, the damage skipped within the budget"
            )?;
        } else {
            writeln!(out, "all {files} files intact")?;
        }
    }
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
