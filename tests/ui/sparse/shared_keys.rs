use tfrecord_core::{Example, Sparse};

#[derive(Example)]
struct ValueIsIndex {
    #[example(sparse(index = "v", value = "v", size = [10]))]
    s: Sparse<i64>,
}

#[derive(Example)]
struct IndexTwice {
    #[example(sparse(index = ["r", "r"], value = "v", size = [10, 10]))]
    s: Sparse<f32>,
}

fn main() {}
