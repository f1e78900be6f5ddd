use tfrecord_core::Example;

#[derive(Example)]
struct Clip {
    id: i64,
    #[example(sequence)]
    frames: Vec<Vec<u8>>,
}

fn main() {}
