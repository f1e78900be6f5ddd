//! The reading pipeline: epochs of (shard, split order, interleave, shuffle buffer), then skip
//! and take; with the checkpoint it saves and restores.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tfrecord_core::ReaderOptions;

use crate::block::{Decoded, Decoder, Raw, Start, decode_or_skip, recycle};
use crate::checkpoint::{BufferState, Checkpoint};
use crate::error::{Error, Result};
use crate::fetch::Fetcher;
use crate::interleave::Interleave;
use crate::options::DatasetOptions;
use crate::plan::{epoch_splits, fingerprint};
use crate::rng::{Rng, Use};
use crate::shuffle::{Held, ShuffleBuffer, no_heap, raw_bytes};
use crate::sources::SourceFile;
use crate::split::{Split, read_positions};

/// What every epoch shares.
struct Context<D: Decoder> {
    files: Arc<[SourceFile]>,
    opts: DatasetOptions,
    decoder: Arc<D>,
    fingerprint: String,
}

/// Reading, interleaving and shuffling records of one epoch, decoded by `E`.
struct Stage<E: Decoder> {
    fetcher: Fetcher<E>,
    interleave: Interleave<E::Out>,
    buffer: Option<ShuffleBuffer<E::Out>>,
    /// The epoch's splits and the reader's options, to label errors with.
    splits: Arc<[Split]>,
    reader: ReaderOptions,
}

impl<E: Decoder> Stage<E> {
    /// From the start of the epoch's `splits`, or from a checkpoint taken inside the epoch.
    fn open(
        opts: &DatasetOptions,
        decoder: Arc<E>,
        splits: Arc<[Split]>,
        epoch: u64,
        saved: Option<&Checkpoint>,
        heap: fn(&E::Out) -> &[u8],
    ) -> Result<Self> {
        let cycle = opts.order.cycle();
        let det = opts.deterministic;
        let interleave = match saved.and_then(|c| c.interleave.as_ref()) {
            Some(state) => Interleave::restore(splits.len(), cycle, det, state)?,
            None => Interleave::new(splits.len(), cycle, det),
        };
        let buffer = match buffer_size(opts) {
            Some((seed, size)) => Some(match saved.and_then(|c| c.shuffle.as_ref()) {
                Some(state) => {
                    state.check(size, interleave.opened())?;
                    let rng = Rng::at(seed, epoch, Use::Buffer, state.draws);
                    let items = reread(&opts.reader, &*decoder, &splits, &state.records)?;
                    ShuffleBuffer::restore(size, rng, items, heap)
                }
                None => ShuffleBuffer::new(size, Rng::new(seed, epoch, Use::Buffer), heap),
            }),
            None => None,
        };
        let starts: HashMap<usize, Start> = interleave.starts().collect();
        let fetcher = Fetcher::new(
            Arc::clone(&splits),
            opts.reader.clone(),
            decoder,
            opts.threads,
            starts,
        );
        Ok(Stage {
            fetcher,
            interleave,
            buffer,
            splits,
            reader: opts.reader.clone(),
        })
    }

    fn next(&mut self) -> Option<Result<Held<E::Out>>> {
        // The closure takes the fields it reads, apart from the buffer.
        let mut pull = || {
            pull(
                &mut self.interleave,
                &mut self.fetcher,
                &self.splits,
                &self.reader,
            )
        };
        match &mut self.buffer {
            Some(b) => b.next(pull),
            None => pull(),
        }
    }

    /// Values of the next records, moved into `out` up to `max` at once: runs of a block's
    /// records, or records drawn from a full shuffle buffer. `None` when none moved so (at the
    /// end of the epoch, or while a shuffle buffer fills or drains), for `next` to go on.
    fn next_many(&mut self, max: usize, out: &mut Vec<E::Out>) -> Option<Result<()>> {
        if let Some(b) = &mut self.buffer {
            let pull = || {
                pull(
                    &mut self.interleave,
                    &mut self.fetcher,
                    &self.splits,
                    &self.reader,
                )
            };
            return b.next_many(pull, max, out);
        }
        let moved = self.interleave.next_many(&mut self.fetcher, max, out)?;
        Some(moved.map_err(|(split, e)| label(&self.splits, split, e, &self.reader)))
    }

    fn save(&self, ckpt: &mut Checkpoint) {
        ckpt.interleave = Some(self.interleave.state());
        ckpt.shuffle = self.buffer.as_ref().map(|b| BufferState {
            draws: b.draws(),
            records: b
                .positions()
                .map(|(split, at)| [split as u64, at.record, at.offset])
                .collect(),
        });
    }
}

/// The interleave's next record, with where it came from.
#[inline(always)] // each value moved once, into the shuffle buffer or to the caller
fn pull<E: Decoder>(
    interleave: &mut Interleave<E::Out>,
    fetcher: &mut Fetcher<E>,
    splits: &[Split],
    reader: &ReaderOptions,
) -> Option<Result<Held<E::Out>>> {
    let (split, item) = interleave.next(fetcher)?;
    let at = Start {
        record: item.record,
        offset: item.offset,
    };
    Some(match item.value {
        Ok(value) => Ok(Held { value, split, at }),
        Err(e) => Err(label(splits, split, e, reader)),
    })
}

/// An error about a record of split `split`, labelled as [`Split::label`] does.
fn label(splits: &[Split], split: usize, e: Error, opts: &ReaderOptions) -> Error {
    match splits.get(split) {
        Some(s) => s.label(e, opts),
        None => e,
    }
}

fn buffer_size(opts: &DatasetOptions) -> Option<(u64, usize)> {
    opts.shuffle
        .filter(|s| s.buffer_size > 1)
        .map(|s| (s.seed, s.buffer_size))
}

/// How an epoch's records are decoded.
enum Stages<D: Decoder> {
    /// As they are read: on the worker threads, or as they are handed out.
    Direct(Stage<D>),
    /// As the decoder asks ([`Decoder::late`]: behind a shuffle buffer, or with worker
    /// threads for values the caller keeps): the records' bytes are read (and checked) ahead,
    /// and each is decoded on the caller's thread as it leaves. A buffer of decoded values
    /// holds several allocations per record, each cold by the time it leaves; bytes are one,
    /// and the decoded value is new when the caller gets it.
    Late(Stage<Raw>, Arc<D>),
}

/// One epoch being read.
struct Run<D: Decoder> {
    paths: Vec<Arc<Path>>,
    /// Where each split's byte range starts, for the splits that are one.
    starts: Vec<Option<u64>>,
    stages: Stages<D>,
    /// Records taken from this epoch.
    records: u64,
}

impl<D: Decoder> Run<D> {
    /// Epoch `epoch`, from its start or from a checkpoint taken inside it.
    fn open(ctx: &Context<D>, epoch: u64, saved: Option<&Checkpoint>) -> Result<Self> {
        let splits: Arc<[Split]> = epoch_splits(&ctx.files, &ctx.opts, epoch).into();
        let paths = splits.iter().map(|s| Arc::from(s.path.as_path())).collect();
        let starts = splits
            .iter()
            .map(|s| s.range.as_ref().map(|r| r.start))
            .collect();
        let opts = &ctx.opts;
        let late = ctx.decoder.late(opts.threads, buffer_size(opts).is_some());
        let stages = if late {
            let stage = Stage::open(opts, Arc::new(Raw), splits, epoch, saved, raw_bytes)?;
            Stages::Late(stage, Arc::clone(&ctx.decoder))
        } else {
            let decoder = Arc::clone(&ctx.decoder);
            let stage = Stage::open(opts, decoder, splits, epoch, saved, no_heap)?;
            Stages::Direct(stage)
        };
        Ok(Run {
            paths,
            starts,
            stages,
            records: saved.map_or(0, |c| c.epoch_records),
        })
    }

    fn next(&mut self) -> Option<Result<Held<D::Out>>> {
        let next = match &mut self.stages {
            Stages::Direct(stage) => stage.next(),
            Stages::Late(stage, decoder) => loop {
                let held = match stage.next()? {
                    Ok(held) => held,
                    Err(e) => break Some(Err(e)),
                };
                let path = &self.paths[held.split];
                let (record, offset) = (held.at.record, held.at.offset);
                let format = D::FORMAT.unwrap_or(tfrecord_core::Format::TfRecord);
                let frame_len = held.value.len() as u64 + format.frame_overhead();
                let decoded =
                    decode_or_skip(&**decoder, &held.value, path, record, offset, frame_len)
                        .map_err(|e| label(&stage.splits, held.split, e, &stage.reader));
                recycle(held.value);
                match decoded {
                    Ok(Decoded::Value(value)) => {
                        break Some(Ok(Held {
                            value,
                            split: held.split,
                            at: held.at,
                        }));
                    }
                    // Skipped as it leaves, and charged there.
                    Ok(Decoded::Skipped(report)) => {
                        let policy = stage.reader.get_bad_records();
                        if let Err(e) = policy.charge_skipped(&report) {
                            let e =
                                label(&stage.splits, held.split, Error::Record(e), &stage.reader);
                            break Some(Err(e));
                        }
                    }
                    Err(e) => break Some(Err(e)),
                }
            },
        };
        if matches!(next, Some(Ok(_))) {
            self.records = self.records.saturating_add(1);
        }
        next
    }

    /// As [`Stage::next_many`], when records are decoded as they are read.
    fn next_many(&mut self, max: usize, out: &mut Vec<D::Out>) -> Option<Result<()>> {
        let Stages::Direct(stage) = &mut self.stages else {
            return None;
        };
        let before = out.len();
        let res = stage.next_many(max, out);
        self.records = self.records.saturating_add((out.len() - before) as u64);
        res
    }

    fn save(&self, ckpt: &mut Checkpoint) {
        ckpt.epoch_records = self.records;
        match &self.stages {
            Stages::Direct(stage) => stage.save(ckpt),
            Stages::Late(stage, _) => stage.save(ckpt),
        }
    }
}

/// Reads a checkpoint's shuffle buffer again, in buffer order.
fn reread<E: Decoder>(
    opts: &ReaderOptions,
    decoder: &E,
    splits: &[Split],
    records: &[[u64; 3]],
) -> Result<Vec<Held<E::Out>>> {
    let mut by_split: HashMap<usize, Vec<(Start, usize)>> = HashMap::new();
    for (i, &[split, record, offset]) in records.iter().enumerate() {
        let split = usize::try_from(split)
            .ok()
            .filter(|&s| s < splits.len())
            .ok_or_else(|| {
                Error::Checkpoint(format!(
                    "a buffered record of split {split}, of {} splits",
                    splits.len()
                ))
            })?;
        by_split
            .entry(split)
            .or_default()
            .push((Start { record, offset }, i));
    }
    let mut items: Vec<Option<Held<E::Out>>> = (0..records.len()).map(|_| None).collect();
    for (split, wanted) in by_split {
        // Read in file order, not buffer order: each value comes back with its place.
        let read = read_positions(&splits[split], opts, decoder, wanted)
            .map_err(|e| splits[split].label(e, opts))?;
        for (value, i) in read {
            let [_, record, offset] = records[i];
            let at = Start { record, offset };
            items[i] = Some(Held { value, split, at });
        }
    }
    Ok(items.into_iter().flatten().collect())
}

/// The whole stream: epochs, then skip and take.
pub(crate) struct Pipeline<D: Decoder> {
    ctx: Context<D>,
    epoch: u64,
    /// Records taken from the stream, skipped ones included.
    records: u64,
    run: Option<Run<D>>,
    finished: bool,
    failed: bool,
}

impl<D: Decoder> Pipeline<D> {
    /// A pipeline over `files`, from the start or from `resume`.
    ///
    /// # Errors
    /// Invalid options, a file of another format than the decoder reads, a checkpoint of
    /// another data set, or a buffered record of the checkpoint that cannot be read again.
    pub(crate) fn new(
        files: Arc<[SourceFile]>,
        opts: DatasetOptions,
        decoder: D,
        resume: Option<&Checkpoint>,
    ) -> Result<Self> {
        opts.validate()?;
        if let Some(format) = D::FORMAT
            && let Some(file) = files.iter().find(|f| f.format != format)
        {
            return Err(Error::Options(format!(
                "{}: the file is listed as {} but the records are read as {} records",
                file.path.display(),
                file.format.name(),
                format.name()
            )));
        }
        let fingerprint = fingerprint(&files, &opts);
        let ctx = Context {
            files,
            opts,
            decoder: Arc::new(decoder),
            fingerprint,
        };
        let mut this = Pipeline {
            epoch: 0,
            records: 0,
            run: None,
            finished: false,
            failed: false,
            ctx,
        };
        if let Some(saved) = resume {
            saved.check(&this.ctx.fingerprint)?;
            this.epoch = saved.epoch;
            this.records = saved.records;
            this.finished = saved.finished;
            if !saved.finished && saved.interleave.is_some() {
                this.run = Some(Run::open(&this.ctx, saved.epoch, Some(saved))?);
            }
        }
        Ok(this)
    }

    /// What the bad-record policy skipped since the last call (from its shared log).
    pub(crate) fn skipped(&self) -> Vec<tfrecord_core::Skipped> {
        self.ctx.opts.reader.get_bad_records().take_logged()
    }

    /// The position after the last record given.
    pub(crate) fn checkpoint(&self) -> Checkpoint {
        let mut ckpt = Checkpoint::start(self.ctx.fingerprint.clone());
        ckpt.epoch = self.epoch;
        ckpt.records = self.records;
        ckpt.finished = self.finished;
        if let Some(run) = self.run.as_ref().filter(|_| !self.finished) {
            run.save(&mut ckpt);
        }
        ckpt.sealed()
    }

    /// The file of split `split` of the epoch being read: where the record [`next`](Self::next)
    /// just gave came from.
    pub(crate) fn path(&self, split: usize) -> Option<Arc<Path>> {
        let run = self.run.as_ref()?;
        run.paths.get(split).cloned()
    }

    /// Where the byte range of split `split` of the epoch being read starts, when it is one.
    pub(crate) fn split_start(&self, split: usize) -> Option<u64> {
        let run = self.run.as_ref()?;
        run.starts.get(split).copied().flatten()
    }

    /// The next record, with its split in the epoch and its position there.
    pub(crate) fn next(&mut self) -> Option<Result<Held<D::Out>>> {
        let opts = &self.ctx.opts;
        loop {
            if self.finished || self.failed {
                return None;
            }
            if opts
                .take
                .is_some_and(|t| self.records >= opts.skip.saturating_add(t))
            {
                self.finish();
                return None;
            }
            let run = match self.run.as_mut() {
                Some(run) => run,
                None => {
                    if opts.epochs.is_some_and(|e| self.epoch >= e) {
                        self.finish();
                        return None;
                    }
                    match Run::open(&self.ctx, self.epoch, None) {
                        Ok(run) => self.run.insert(run),
                        Err(e) => {
                            self.failed = true;
                            return Some(Err(e));
                        }
                    }
                }
            };
            match run.next() {
                Some(Ok(held)) => {
                    self.records = self.records.saturating_add(1);
                    if self.records <= opts.skip {
                        continue;
                    }
                    return Some(Ok(held));
                }
                Some(Err(e)) => {
                    self.failed = true;
                    return Some(Err(e));
                }
                None => {
                    let empty = run.records == 0;
                    self.run = None;
                    self.epoch = self.epoch.saturating_add(1);
                    if empty && opts.epochs.is_none() {
                        self.finish();
                        return None;
                    }
                }
            }
        }
    }

    /// Moves the values of the next records into `out` until it holds `n`, or the stream ends:
    /// what [`next`](Self::next) gives, taken a run at a time where it can be (records of one
    /// block, in a stretch with nothing to skip).
    ///
    /// # Errors
    /// As `next`; the values moved before the error stay in `out`.
    pub(crate) fn fill(&mut self, out: &mut Vec<D::Out>, n: usize) -> Result<()> {
        while out.len() < n {
            let opts = &self.ctx.opts;
            let mut room = n - out.len();
            if let Some(take) = opts.take {
                let left = opts.skip.saturating_add(take).saturating_sub(self.records);
                room = room.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            if room > 1
                && self.records >= opts.skip
                && !self.finished
                && !self.failed
                && let Some(run) = self.run.as_mut()
            {
                let before = out.len();
                let res = run.next_many(before + room, out);
                self.records = self.records.saturating_add((out.len() - before) as u64);
                match res {
                    Some(Ok(())) => continue,
                    Some(Err(e)) => {
                        self.failed = true;
                        return Err(e);
                    }
                    // The end of the epoch, or a run that hands records out one at a time.
                    None => {}
                }
            }
            match self.next() {
                Some(Ok(held)) => out.push(held.value),
                Some(Err(e)) => return Err(e),
                None => break,
            }
        }
        Ok(())
    }

    fn finish(&mut self) {
        self.finished = true;
        self.run = None;
    }
}
