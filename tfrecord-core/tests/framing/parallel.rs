//! `for_each_chunk`: how many threads a file is read on.

use tfrecord_core::{ReaderOptions, for_each_chunk};

use super::common::{build, records, write};

/// Reads `path` on `threads` threads; returns, per thread that ran, whether it was the
/// calling thread and how many records it read.
fn read(path: &std::path::Path, opts: ReaderOptions, threads: usize) -> Vec<(bool, u64)> {
    let caller = std::thread::current().id();
    for_each_chunk(
        path,
        opts,
        threads,
        || (std::thread::current().id() == caller, 0u64),
        |(_, n): &mut (bool, u64), chunk| {
            let mut records = chunk.records();
            while records.next_record()?.is_some() {
                *n += 1;
            }
            Ok::<_, tfrecord_core::Error>(())
        },
        Ok,
    )
    .unwrap()
}

/// A file of one chunk or less is read on the calling thread, however many threads are
/// asked for (none would have a chunk to take); a longer file is read on as many as asked.
#[test]
fn a_file_of_one_chunk_is_read_on_the_calling_thread() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(40);
    let built = build(&recs);
    let path = write(dir.path(), "d.tfrecord", &built.bytes);
    for threads in [0, 4] {
        assert_eq!(read(&path, ReaderOptions::new(), threads), [(true, 40)]);
    }
    let small_chunks = ReaderOptions::new().buffer_size(64);
    assert!(built.bytes.len() > 3 * 64);
    let per_thread = read(&path, small_chunks, 3);
    assert_eq!(per_thread.len(), 3);
    assert!(per_thread.iter().all(|&(caller, _)| !caller));
    assert_eq!(per_thread.iter().map(|&(_, n)| n).sum::<u64>(), 40);
}
