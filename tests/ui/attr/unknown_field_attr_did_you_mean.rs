use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(kye = "x")]
    label: i64,
}

fn main() {}
