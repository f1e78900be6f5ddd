use tfrecord_core::{Example, SequenceExample};

struct NoDefault;

#[derive(Example)]
struct Record {
    label: i64,
    #[example(skip)]
    cache: NoDefault,
}

#[derive(SequenceExample)]
struct Clip {
    id: i64,
    #[example(skip)]
    cache: NoDefault,
}

fn main() {}
