use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml", record = "Mnist")]
struct Mnist {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    #[example(default = 0)]
    label: i64,
    #[example(default)]
    tags: Vec<String>,
}

fn main() {}
