use tfrecord_core::{Example, SequenceExample, Sparse};

#[derive(Example)]
struct Inner {
    x: i64,
}

#[derive(Example)]
struct Fixed {
    #[example(required)]
    label: i64,
    #[example(required)]
    pair: [f32; 2],
    #[example(required, shape = [2, 2])]
    grid: Vec<f32>,
    #[example(required, sparse(index = "idx", value = "val"))]
    cells: Sparse<f32>,
    #[example(required, skip)]
    cache: Vec<u8>,
    #[example(required, flatten)]
    inner: Inner,
}

#[derive(SequenceExample)]
struct Steps {
    #[example(sequence, required)]
    scores: Vec<f32>,
    #[example(sequence, required)]
    tokens: Vec<Vec<i64>>,
}

fn main() {}
