use tfrecord_core::Example;

#[derive(Example)]
struct Pair(i64, f32);

fn main() {}
