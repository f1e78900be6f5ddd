use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(key = "label")]
    first: i64,
    #[example(key = "label")]
    second: i64,
}

fn main() {}
