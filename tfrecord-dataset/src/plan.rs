//! The splits one worker reads in one epoch: this worker's shard of the splits in listing
//! order, then their order (shuffled per epoch from the seed).
//!
//! Every file is one split ([`Split::whole`]) while there are at least as many files as
//! workers, and shards deal them as tf.data's `list_files().shard()` does. Sharded over more
//! workers than files, each uncompressed TFRecord file is cut into `n` byte ranges
//! ([`splits_of`]; fewer when they would be shorter than [`MIN_SPLIT_BYTES`] or the files
//! together would make more than [`SPLIT_BUDGET`], so that the plan stays small for any `n`)
//! before the shards are dealt, so that workers are not left empty for want of files (a
//! range's reader finds its first record boundary by the checksums: see tfrecord-core's
//! `RecordReader::open_range`); compressed and OFRecord files stay whole, as they cannot be
//! entered in the middle. Sharding deals splits, whatever they are.

use tfrecord_core::{Compression, Format};

use crate::options::{DatasetOptions, Shard};
use crate::rng::{Rng, Use};
use crate::sources::SourceFile;
use crate::split::Split;

/// The shortest byte range a file is cut into: a file of `len` bytes is cut into at most
/// `len / MIN_SPLIT_BYTES` (rounded up) ranges, whatever the number of workers, and the workers
/// beyond them read none of it.
pub(crate) const MIN_SPLIT_BYTES: u64 = 256;

/// At most about this many splits in all: with many files, each is cut into fewer ranges, so
/// that the plan stays small for any number of workers.
pub(crate) const SPLIT_BUDGET: usize = 1 << 18;

/// The splits a file is read as: the whole file, or `workers` byte ranges of an uncompressed
/// TFRecord file (whose record boundaries its checksums show), so that a file is spread over
/// the workers; at most one range per [`MIN_SPLIT_BYTES`], and at most `budget`. Compressed and
/// OFRecord files are read whole.
fn splits_of(file: &SourceFile, workers: usize, budget: usize) -> Vec<Split> {
    let cut =
        workers > 1 && file.format == Format::TfRecord && file.compression == Compression::None;
    // What is not a regular file (a pipe, a device) has no size to cut by and reads in order:
    // it is dealt whole, as a compressed file is.
    let len = if cut {
        std::fs::metadata(&file.path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
    } else {
        None
    };
    match len {
        Some(len) => {
            let ranges =
                (workers.min(budget.max(1)) as u64).min(len.div_ceil(MIN_SPLIT_BYTES).max(1));
            (0..ranges)
                .filter_map(|i| tfrecord_core::split_range(len, i, ranges))
                .map(|range| Split {
                    range: Some(range),
                    ..Split::whole(file)
                })
                .collect()
        }
        None => vec![Split::whole(file)],
    }
}

/// The splits of `files` that this worker reads in `epoch`, in reading order.
pub(crate) fn epoch_splits(files: &[SourceFile], opts: &DatasetOptions, epoch: u64) -> Vec<Split> {
    // Files are dealt whole, as tf.data's `list_files().shard()` deals them, while there are
    // enough for every worker; with fewer files than workers they are cut into byte ranges, so
    // that no worker is left without records.
    let workers = opts.shard.map_or(1, |s| s.count);
    let ranges = if workers > files.len() { workers } else { 1 };
    let budget = SPLIT_BUDGET / files.len().max(1);
    let all = files.iter().flat_map(|f| splits_of(f, ranges, budget));
    // The shard is dealt before the order is drawn, so that which records a worker reads does
    // not depend on the seed: workers that shuffle with seeds of their own still read every
    // record exactly once between them.
    let mut splits: Vec<Split> = match opts.shard {
        Some(Shard { index, count }) => all
            .enumerate()
            .filter(|(k, _)| k % count == index)
            .map(|(_, s)| s)
            .collect(),
        None => all.collect(),
    };
    if let Some(shuffle) = opts.shuffle
        && shuffle.files
    {
        Rng::new(shuffle.seed, epoch, Use::SplitOrder).shuffle(&mut splits);
    }
    splits
}

/// A short text that changes whenever the files or any option that decides which records
/// come in which order changes: FNV-1a (64-bit) over a canonical description, in hex.
/// Threads and determinism are left out: a checkpoint resumes with any thread count.
///
/// The files are described by their paths (as components, so that `data/.` and `data` are one
/// directory) and their sizes now: a file that grew, shrank or was rewritten to another size
/// would move the byte ranges a checkpoint's positions are in (and its records), so resuming
/// over it is an error rather than a silently different stream.
pub(crate) fn fingerprint(files: &[SourceFile], opts: &DatasetOptions) -> String {
    let mut h = Fnv::new();
    h.text("tfrecord-dataset 5");
    h.u64(files.len() as u64);
    for f in files {
        for part in f.path.components() {
            if part != std::path::Component::CurDir {
                h.text(&part.as_os_str().to_string_lossy());
            }
        }
        h.u64(std::fs::metadata(&f.path).map_or(u64::MAX, |m| m.len()));
        h.text(f.format.name());
        h.text(f.compression.name());
    }
    let (cycle, block) = opts.order.cycle();
    h.u64(cycle as u64);
    h.u64(block as u64);
    match opts.shuffle {
        Some(s) => {
            h.u64(1);
            h.u64(s.seed);
            h.u64(s.buffer_size as u64);
            h.u64(u64::from(s.files));
        }
        None => h.u64(0),
    }
    h.option(opts.epochs);
    let (index, count) = opts.shard.map_or((0, 1), |s| (s.index, s.count));
    h.u64(index as u64);
    h.u64(count as u64);
    h.u64(opts.skip);
    h.option(opts.take);
    format!("{:016x}", h.0)
}

/// FNV-1a, 64-bit.
/// FNV-1a, 64 bits: a stable hash of what decides a data set's order, and of a checkpoint's
/// contents.
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// `None` and every `Some` hash apart, up to `Some(u64::MAX)`.
    fn option(&mut self, v: Option<u64>) {
        match v {
            Some(v) => {
                self.u64(1);
                self.u64(v);
            }
            None => self.u64(0),
        }
    }

    fn text(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }

    /// The hash so far.
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Shuffle;

    fn files(n: usize) -> Vec<SourceFile> {
        (0..n)
            .map(|i| SourceFile::new(format!("f{i}.tfrecord")))
            .collect()
    }

    #[test]
    fn shards_partition_each_epochs_split_order() {
        let files = files(11);
        for epoch in 0..3 {
            let opts = |o: DatasetOptions| o.shuffle(Shuffle::new(5));
            let all = epoch_splits(&files, &opts(DatasetOptions::new()), epoch);
            let mut dealt: Vec<Split> = Vec::new();
            for i in 0..4 {
                let mine = epoch_splits(&files, &opts(DatasetOptions::new().shard(i, 4)), epoch);
                assert_eq!(mine.len(), (11 - i).div_ceil(4));
                dealt.extend(mine);
            }
            dealt.sort_by(|a, b| a.path.cmp(&b.path));
            let mut sorted = all.clone();
            sorted.sort_by(|a, b| a.path.cmp(&b.path));
            assert_eq!(dealt, sorted);
        }
    }

    #[test]
    fn split_order_changes_per_epoch_only_with_shuffle() {
        let files = files(20);
        let plain = DatasetOptions::new();
        assert_eq!(
            epoch_splits(&files, &plain, 0),
            epoch_splits(&files, &plain, 1)
        );
        let shuffled = DatasetOptions::new().shuffle(Shuffle::new(1));
        let e0 = epoch_splits(&files, &shuffled, 0);
        assert_ne!(e0, epoch_splits(&files, &shuffled, 1));
        assert_eq!(e0, epoch_splits(&files, &shuffled, 0));
        let fixed = DatasetOptions::new().shuffle(Shuffle::new(1).files(false));
        assert_eq!(
            epoch_splits(&files, &fixed, 3),
            epoch_splits(&files, &plain, 0)
        );
    }

    #[test]
    fn fingerprint_ignores_threads_only() {
        let files = files(3);
        let base = fingerprint(&files, &DatasetOptions::new());
        let same = DatasetOptions::new().threads(4).deterministic(false);
        assert_eq!(base, fingerprint(&files, &same));
        for other in [
            DatasetOptions::new().take(3),
            DatasetOptions::new().skip(1),
            DatasetOptions::new().shard(0, 2),
            DatasetOptions::new().interleave(2, 1),
            DatasetOptions::new().shuffle(Shuffle::new(0)),
            DatasetOptions::new().epochs(None),
        ] {
            assert_ne!(base, fingerprint(&files, &other), "{other:?}");
        }
        assert_ne!(base, fingerprint(&files[..2], &DatasetOptions::new()));
    }
}
