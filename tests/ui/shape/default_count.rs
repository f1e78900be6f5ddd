use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(shape = [2], default = [1, 2, 3])]
    v: Vec<i64>,
}

fn main() {}
