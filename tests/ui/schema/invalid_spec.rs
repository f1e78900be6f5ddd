use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/broken.toml")]
struct Mnist {
    label: i64,
}

fn main() {}
