use tfrecord_core::Example;

struct Point {
    x: f32,
    y: f32,
}

#[derive(Example)]
struct Record {
    label: i64,
    point: Point,
}

fn main() {}
