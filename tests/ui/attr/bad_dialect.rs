use tfrecord_core::Example;

#[derive(Example)]
#[example(dialect = "onnx")]
struct Record {
    label: i64,
}

fn main() {}
