use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml", record = "Mnsit")]
struct Digits {
    label: i64,
}

fn main() {}
