//! Where the interleave gets blocks of records from: read on the calling thread ([`Inline`]), or
//! read ahead by a pool of threads ([`crate::pool::Pool`]). Both read each split in order, one
//! block after the other, so the records the interleave sees do not depend on which is used.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tfrecord_core::{BadRecords, ReaderOptions};

use crate::block::{Block, Decoder, Start};
use crate::pool::Pool;
use crate::split::{Split, SplitReader};

/// The splits the interleave will ask for: those open in its cycle, and (for reading ahead)
/// those from `next_input` on.
pub(crate) struct Window<'a> {
    /// Splits open in the cycle, sorted.
    pub(crate) open: &'a [usize],
    /// The first split not opened yet.
    pub(crate) next_input: usize,
}

/// A source of blocks for the splits of one epoch.
pub(crate) enum Fetcher<D: Decoder> {
    /// Reading on the calling thread.
    Inline(Inline<D>),
    /// Reading ahead on worker threads.
    Pool(Pool<D>),
}

impl<D: Decoder> Fetcher<D> {
    /// A fetcher over `splits`, reading on `threads` threads (1: the calling thread); `starts`
    /// are the positions splits resume at (others start at their beginning).
    pub(crate) fn new(
        splits: Arc<[Split]>,
        opts: ReaderOptions,
        decoder: Arc<D>,
        threads: usize,
        starts: HashMap<usize, Start>,
    ) -> Self {
        if threads <= 1 {
            Fetcher::Inline(Inline {
                splits,
                opts,
                decoder,
                readers: HashMap::new(),
                starts,
            })
        } else {
            Fetcher::Pool(Pool::new(splits, opts, decoder, threads, starts))
        }
    }

    /// The next block of split `split`, waiting for it if it is being read.
    pub(crate) fn next_block(&mut self, split: usize) -> Block<D::Out> {
        match self {
            Fetcher::Inline(f) => f.next_block(split),
            Fetcher::Pool(p) => p.next_block(split),
        }
    }

    /// The next block of split `split` if one is ready now.
    pub(crate) fn try_block(&mut self, split: usize) -> Option<Block<D::Out>> {
        match self {
            Fetcher::Inline(f) => Some(f.next_block(split)),
            Fetcher::Pool(p) => p.try_block(split),
        }
    }

    /// Tells which splits will be asked for.
    pub(crate) fn window(&mut self, window: &Window<'_>) {
        if let Fetcher::Pool(p) = self {
            p.window(window);
        }
    }

    /// The data set's bad-record policy, which what the readers skipped is charged to as the
    /// records are handed out.
    pub(crate) fn policy(&self) -> &BadRecords {
        match self {
            Fetcher::Inline(f) => f.opts.get_bad_records(),
            Fetcher::Pool(p) => p.opts().get_bad_records(),
        }
    }

    /// What turns records into values.
    pub(crate) fn decoder(&self) -> &D {
        match self {
            Fetcher::Inline(f) => &f.decoder,
            Fetcher::Pool(p) => p.decoder(),
        }
    }

    /// The file of a split.
    pub(crate) fn path(&self, split: usize) -> &Path {
        let splits = match self {
            Fetcher::Inline(f) => &f.splits,
            Fetcher::Pool(p) => p.splits(),
        };
        &splits[split].path
    }

    /// Forgets a split the interleave is done with.
    pub(crate) fn close(&mut self, split: usize) {
        match self {
            Fetcher::Inline(f) => {
                f.readers.remove(&split);
            }
            Fetcher::Pool(p) => p.close(split),
        }
    }
}

/// Reads on the calling thread, opening splits when first asked for.
pub(crate) struct Inline<D: Decoder> {
    splits: Arc<[Split]>,
    opts: ReaderOptions,
    decoder: Arc<D>,
    readers: HashMap<usize, Option<SplitReader>>,
    starts: HashMap<usize, Start>,
}

impl<D: Decoder> Inline<D> {
    fn next_block(&mut self, split: usize) -> Block<D::Out> {
        let slot = self.readers.entry(split).or_insert(None);
        let reader = match slot {
            Some(r) => r,
            None => {
                let start = self.starts.remove(&split).unwrap_or_default();
                match SplitReader::open(&self.splits[split], &self.opts, start) {
                    Ok(r) => slot.insert(r),
                    Err(e) => return Block::failed(e, start),
                }
            }
        };
        if D::DEFERRED {
            reader
                .read_raw()
                .hand_out(&*self.decoder, &self.splits[split].path)
        } else {
            reader.read_block(&*self.decoder)
        }
    }
}
