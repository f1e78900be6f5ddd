use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(shape = [2, -1])]
    v: Vec<f32>,
}

fn main() {}
