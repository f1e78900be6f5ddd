//! `remove_unfinished_shards`, in a process of its own (it removes the temporary files of every
//! sharded writer of the process): what an interrupt's clean-up leaves.

use tfrecord_dataset::{
    ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions, remove_unfinished_shards,
};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn unfinished_shards_are_removed_and_finished_sets_stay() {
    let dir = tempfile::tempdir().expect("tempdir");
    let done = dir.path().join("done.tfrecord");
    let open = dir.path().join("open.tfrecord");
    let create = |base: &std::path::Path| {
        let opts = ShardedWriterOptions::new(
            ShardNaming::TensorFlow(base.to_path_buf()),
            ShardSplit::RoundRobin(2),
        );
        let mut w = ShardedWriter::create(opts).expect("creates");
        for i in 0..5u8 {
            w.write(&[i]).expect("writes");
        }
        w
    };
    create(&done).finish().expect("finishes");
    let writer = create(&open);
    assert_eq!(
        names(dir.path())
            .iter()
            .filter(|n| n.contains(".tmp-"))
            .count(),
        2,
        "{:?}",
        names(dir.path())
    );
    remove_unfinished_shards();
    assert_eq!(
        names(dir.path()),
        [
            "done-00000-of-00002.tfrecord",
            "done-00001-of-00002.tfrecord"
        ],
        "only the finished set is left"
    );
    assert!(writer.finish().is_err(), "its files are gone");
    assert_eq!(names(dir.path()).len(), 2, "nothing renamed into place");
}
