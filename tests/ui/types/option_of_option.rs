use tfrecord_core::{Example, SequenceExample};

#[derive(Example)]
struct Scores {
    best: Option<Option<i64>>,
}

#[derive(SequenceExample)]
struct Steps {
    #[example(sequence)]
    steps: Vec<Option<Option<f32>>>,
}

fn main() {}
