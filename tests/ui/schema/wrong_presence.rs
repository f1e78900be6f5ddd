use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml")]
struct Mnist {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    label: i64,
    #[example(shape = [28, 28])]
    pixels: Vec<f32>,
    #[example(required)]
    tags: Vec<String>,
}

fn main() {}
