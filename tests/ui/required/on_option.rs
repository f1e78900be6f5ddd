use tfrecord_core::Example;

#[derive(Example)]
struct Tags {
    #[example(required)]
    tags: Option<Vec<String>>,
}

fn main() {}
