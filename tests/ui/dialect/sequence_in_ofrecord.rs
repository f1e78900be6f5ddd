use tfrecord_core::SequenceExample;

#[derive(SequenceExample)]
#[example(dialect = "ofrecord")]
struct Clip {
    id: i64,
    #[example(sequence)]
    frames: Vec<Vec<u8>>,
}

fn main() {}
