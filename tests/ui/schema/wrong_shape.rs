use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml")]
struct Mnist {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    #[example(default = 0)]
    label: i64,
    #[example(shape = [784])]
    pixels: Vec<f32>,
    #[example(default)]
    tags: Vec<String>,
}


// An array holds the spec's count of values, but not its shape: `shape = [28, 28]` says so.
#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml", record = "Mnist")]
struct MnistArray {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    #[example(default = 0)]
    label: i64,
    pixels: [f32; 784],
    #[example(default)]
    tags: Vec<String>,
}

fn main() {}
