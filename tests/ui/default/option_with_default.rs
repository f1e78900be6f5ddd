use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(default = 3)]
    n: Option<i64>,
}

fn main() {}
