use tfrecord_core::Example;

#[derive(Example)]
#[example(repr = "int64")]
struct Record {
    label: i64,
}

fn main() {}
