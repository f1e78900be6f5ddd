use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(shape = [2])]
    a: i64,
}

fn main() {}
