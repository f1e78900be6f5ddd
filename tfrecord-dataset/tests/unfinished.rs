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
    // A writer that would replace the finished set (`--force`).
    let opts = ShardedWriterOptions::new(
        ShardNaming::TensorFlow(done.clone()),
        ShardSplit::RoundRobin(3),
    )
    .overwrite(true);
    let mut replacing = ShardedWriter::create(opts).expect("creates");
    for i in 0..5u8 {
        replacing.write(&[i]).expect("writes");
    }
    assert_eq!(
        names(dir.path())
            .iter()
            .filter(|n| n.contains(".tmp-"))
            .count(),
        5,
        "{:?}",
        names(dir.path())
    );
    assert_eq!(remove_unfinished_shards(), 5);
    let finished = [
        "done-00000-of-00002.tfrecord",
        "done-00001-of-00002.tfrecord",
    ];
    assert_eq!(names(dir.path()), finished, "only the finished set is left");
    assert!(writer.finish().is_err(), "its files are gone");
    assert_eq!(names(dir.path()), finished, "nothing renamed into place");
    // Interrupted before its finish: the older set stays whole (its files were once removed
    // before the failure).
    let e = replacing
        .finish()
        .expect_err("its files are gone")
        .to_string();
    assert!(
        e.contains("no shard was renamed into place and no file of another set removed"),
        "{e}"
    );
    assert_eq!(names(dir.path()), finished);
    assert_eq!(remove_unfinished_shards(), 0);
    // After the clean-up no shard file is made (one made then would be left behind).
    let opts = ShardedWriterOptions::new(
        ShardNaming::TensorFlow(dir.path().join("late.tfrecord")),
        ShardSplit::RoundRobin(2),
    );
    let Err(e) = ShardedWriter::create(opts) else {
        panic!("a shard made after the clean-up")
    };
    let e = e.to_string();
    assert!(e.contains("being interrupted"), "{e}");
    assert_eq!(names(dir.path()), finished);
}
