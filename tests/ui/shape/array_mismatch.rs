use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(shape = [2, 3])]
    a: [f32; 5],
}

fn main() {}
