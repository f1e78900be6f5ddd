use tfrecord_core::{Example, SequenceExample};

#[derive(Example)]
struct Rows {
    // Only the first dimension can be unknown.
    #[example(shape = [2, -1])]
    late: Vec<f32>,
    // An array holds a known count.
    #[example(shape = [-1, 2])]
    array: [f32; 4],
    // Rows are empty when absent: the padding value belongs to the parser's spec.
    #[example(shape = [-1, 2], default = 1.0)]
    padded: Vec<f32>,
}

#[derive(SequenceExample)]
struct Clip {
    // Rows of a context feature: TensorFlow's context features have no unknown dimension.
    #[example(shape = [-1, 2])]
    context_rows: Vec<f32>,
}

fn main() {}
