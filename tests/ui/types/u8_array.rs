use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    pixels: [u8; 4],
}

fn main() {}
