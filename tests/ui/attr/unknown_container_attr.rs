use tfrecord_core::Example;

#[derive(Example)]
#[example(deny_unknown_fields)]
struct Record {
    label: i64,
}

fn main() {}
