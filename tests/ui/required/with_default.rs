use tfrecord_core::Example;

#[derive(Example)]
struct Ids {
    #[example(required, default)]
    ids: Vec<i64>,
    #[example(default = [1, 2], required)]
    more: Vec<i64>,
}

fn main() {}
