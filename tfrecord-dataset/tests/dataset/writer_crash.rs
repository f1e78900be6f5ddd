//! A writer killed with SIGKILL mid-write leaves no file under a final name: the test binary
//! runs itself as the child (the ignored test below), which writes shards until it is killed.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tfrecord_dataset::{
    Dataset, Error, ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions,
};

/// Where the child writes; set only in the child's environment.
const CHILD_DIR: &str = "TFRECORD_DATASET_CRASH_CHILD_DIR";
/// The child's line on standard output once it has completed some shards.
const READY: &str = "child: shards written";

/// The child: writes shards of 100 records into `$CHILD_DIR` without ever finishing, and says
/// so on standard output once several shards are complete. Without the variable (a plain
/// `cargo test -- --ignored`) it does nothing.
#[test]
#[ignore = "the child process of killed_writer_leaves_no_file_under_a_final_name"]
fn child_writes_until_killed() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let base = Path::new(&dir).join("train.tfrecord");
    let naming = ShardNaming::TensorFlow(base);
    let opts = ShardedWriterOptions::new(naming, ShardSplit::Records(100)).sync(true);
    let mut writer = ShardedWriter::create(opts).expect("creates");
    let record = vec![7u8; 1000];
    for _ in 0..550 {
        writer.write(&record).expect("writes");
    }
    println!("{READY}");
    // Keep writing, slowly, until killed; give up after a minute if nobody does.
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        writer.write(&record).expect("writes");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::process::exit(3);
}

#[test]
fn killed_writer_leaves_no_file_under_a_final_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("the test binary");
    let mut child = Command::new(exe)
        .args([
            "dataset::writer_crash::child_writes_until_killed",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    let stdout = child.stdout.take().expect("piped");
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        // libtest may print the test's name on the same line first.
        .any(|line| line.contains(READY));
    child.kill().expect("kills");
    let status = child.wait().expect("waits");
    assert!(
        ready,
        "the child never got to write its shards ({status:?})"
    );
    assert_eq!(status.signal(), Some(9), "{status:?}");

    let mut temporary_bytes = 0;
    for entry in std::fs::read_dir(dir.path()).expect("lists") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(name.starts_with('.'), "a file under a final name: {name}");
        temporary_bytes += entry.metadata().expect("stat").len();
    }
    // Five complete shards of 100 records of 1016 framed bytes, synced, and more.
    assert!(
        temporary_bytes >= 5 * 100 * 1016,
        "{temporary_bytes} bytes written"
    );
    let err = Dataset::open([dir.path()]).expect_err("nothing to read");
    assert!(matches!(err, Error::NoFiles { .. }), "{err:?}");
}
