use tfrecord_core::Example;

#[derive(Example)]
struct Record<T> {
    value: T,
}

fn main() {}
