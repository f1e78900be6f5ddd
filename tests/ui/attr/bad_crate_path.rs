use tfrecord_core::Example;

mod reexport {}

#[derive(Example)]
#[example(crate = "crate::reexport::tfr")]
struct Record {
    label: i64,
}

fn main() {}
