use tfrecord_core::Example;

#[derive(Example)]
enum Shape {
    Circle(f32),
    Square { side: f32 },
    Empty,
}

fn main() {}
