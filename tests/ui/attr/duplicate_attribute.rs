use tfrecord_core::Example;

// An attribute given twice would silently keep its last value.
#[derive(Example)]
#[example(rename_all = "UPPERCASE")]
#[example(rename_all = "lowercase")]
struct Record {
    #[example(default = 1, default = 2)]
    a: i64,
    #[example(shape = [2])]
    #[example(shape = [3])]
    b: Vec<i64>,
    #[example(lossy, lossy)]
    c: f64,
    #[example(sparse(index = "i", value = "v", size = [10], size = [20]))]
    d: tfrecord_core::Sparse<f32>,
}

fn main() {}
