use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(lossy)]
    weight: f32,
}

fn main() {}
