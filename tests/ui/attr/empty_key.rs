use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(key = "")]
    label: i64,
}

fn main() {}
