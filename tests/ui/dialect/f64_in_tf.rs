use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    weight: f64,
}

fn main() {}
