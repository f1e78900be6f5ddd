use tfrecord_core::SequenceExample;

#[derive(SequenceExample)]
struct Clip {
    #[example(sequence)]
    x: i64,
}

fn main() {}
