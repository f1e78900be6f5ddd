use tfrecord_core::Example;

#[derive(Default)]
struct Point {
    x: f32,
    y: f32,
}

#[derive(Example)]
struct Record {
    label: i64,
    #[example(flatten)]
    point: Point,
}

fn main() {}
