use tfrecord_core::{Example, Sparse};

#[derive(Example)]
struct Grid {
    #[example(sparse(index = ["row", "col"], value = "v", size = [3], sorted))]
    cells: Sparse<i64>,
    #[example(key = "row")]
    row: i64,
}

fn main() {}
