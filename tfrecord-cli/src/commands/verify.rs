//! `tfrecord verify`: the framing and checksums of every record of every file, going on past
//! a failing file.
//!
//! With `--limit`, `--skip`, `--shard` or `--shuffle` the records checked are chosen over all
//! inputs together, as the other reading commands choose them; each file's line then counts
//! the chosen records it holds, and an error ends the reading there.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::VerifyArgs;
use crate::dataset::{self, Report, Totals};
use crate::error::{CliError, CliResult, report};
use crate::input::{
    Flow, Location, RecordType, Source, for_each_record_parallel, reader_options, resolve,
};
use crate::stdout::{Stdout, stdout};

/// `tfrecord verify`.
pub(crate) fn run(args: &VerifyArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let check = |bytes: &[u8], loc: &Location<'_>| -> CliResult<()> {
        if args.decode {
            ty.check(bytes, loc)?;
        }
        Ok(())
    };
    let mut out = stdout();
    let mut tally = Tally::default();
    // One bad-record budget over every file, as the other commands have.
    let policy = args.dataset.policy();
    let mut skipped = Totals::default();
    if args.dataset.selects() {
        let mut sources = Vec::new();
        for arg in &args.files {
            match resolve(arg) {
                Ok(s) => sources.extend(s),
                Err(e) => tally.failed(&mut out, &arg.display().to_string(), &e)?,
            }
        }
        selected(
            args,
            &sources,
            policy,
            &mut skipped,
            &mut out,
            &mut tally,
            check,
        )?;
        skipped.finish();
        return tally.finish(&mut out);
    }
    for arg in &args.files {
        let sources = match resolve(arg) {
            Ok(s) => s,
            Err(e) => {
                tally.failed(&mut out, &arg.display().to_string(), &e)?;
                continue;
            }
        };
        for source in &sources {
            let spent = policy.spent();
            let res = if args.dataset.any() {
                // Damaged records skipped within the budget: in order, on one thread.
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
            let name = source.name().display().to_string();
            match res {
                Ok(n) => tally.read(&mut out, &name, n, policy.spent() - spent)?,
                // A misused command line is not a verdict on the file.
                Err(e) if e.is_broken_pipe() || matches!(e, CliError::Usage(_)) => return Err(e),
                Err(e) => tally.failed(&mut out, &name, &e)?,
            }
        }
    }
    skipped.finish();
    tally.finish(&mut out)
}

/// The records the data set flags choose from all of `sources`, read as one stream: a line
/// per file when it ends, or the file of the error that ended it.
fn selected(
    args: &VerifyArgs,
    sources: &[Source],
    policy: tfrecord_core::BadRecords,
    skipped: &mut Totals,
    out: &mut Stdout,
    tally: &mut Tally,
    check: impl Fn(&[u8], &Location<'_>) -> CliResult<()>,
) -> CliResult<()> {
    let mut place: HashMap<PathBuf, usize> = HashMap::new();
    for (i, s) in sources.iter().enumerate() {
        place.entry(s.name()).or_insert(i);
    }
    let mut counts = vec![0u64; sources.len()];
    let res = dataset::read_with(
        policy,
        Report::Into(skipped),
        sources,
        &args.read,
        true,
        &args.dataset,
        |b, l| {
            check(b, l)?;
            if let Some(&i) = place.get(l.path) {
                counts[i] += 1;
            }
            Ok(Flow::Continue)
        },
    );
    match res {
        Ok(_) => {
            for (i, source) in sources.iter().enumerate() {
                let name = source.name();
                if place.get(&name) == Some(&i) {
                    let damage = skipped.in_file(&name);
                    tally.read(out, &name.display().to_string(), counts[i], damage)?;
                }
            }
            Ok(())
        }
        Err(e) if e.is_broken_pipe() || matches!(e, CliError::Usage(_)) => Err(e),
        Err(e) => {
            // The other files count as read: the error ended the stream, not them.
            tally.files += place.len().saturating_sub(1);
            let name = match &e {
                CliError::Core(core) => core.path().map(|p| p.display().to_string()),
                _ => None,
            };
            tally.failed(out, name.as_deref().unwrap_or("(the chosen records)"), &e)
        }
    }
}

/// The verdicts so far.
#[derive(Default)]
struct Tally {
    files: usize,
    failed: usize,
    damaged: usize,
}

impl Tally {
    /// A file read to its end: `n` records, `damage` skips within the budget.
    fn read(&mut self, out: &mut Stdout, name: &str, n: u64, damage: u64) -> CliResult<()> {
        self.files += 1;
        let noun = if n == 1 { "record" } else { "records" };
        if damage == 0 {
            writeln!(out, "{name}\tOK\t{n} {noun}")?;
        } else {
            self.damaged += 1;
            writeln!(
                out,
                "{name}\tDAMAGED\t{n} {noun}, {damage} damaged record(s) or byte range(s) skipped"
            )?;
        }
        Ok(())
    }

    /// A file that failed with `e`.
    fn failed(&mut self, out: &mut Stdout, name: &str, e: &CliError) -> CliResult<()> {
        self.files += 1;
        self.failed += 1;
        writeln!(out, "{name}\tFAILED")?;
        out.flush()?;
        report(e);
        Ok(())
    }

    /// The closing line (for several files) and the exit status.
    fn finish(self, out: &mut Stdout) -> CliResult<ExitCode> {
        let Tally {
            files,
            failed,
            damaged,
        } = self;
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
}
