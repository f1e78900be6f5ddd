use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(default = "x")]
    n: i64,
}

fn main() {}
