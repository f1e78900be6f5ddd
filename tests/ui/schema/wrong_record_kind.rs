use tfrecord_core::SequenceExample;

#[derive(SequenceExample)]
#[example(schema = "ui/schema/mnist.toml", record = "Digit")]
struct Digit {
    label: i64,
}

fn main() {}
