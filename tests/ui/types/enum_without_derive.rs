use tfrecord_core::Example;

enum Color {
    Red,
    Green,
}

#[derive(Example)]
struct Record {
    color: Color,
}

fn main() {}
