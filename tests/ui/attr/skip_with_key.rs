use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    label: i64,
    #[example(skip, key = "cache")]
    cache: Vec<String>,
}

fn main() {}
