use tfrecord_core::Example;

#[derive(Example)]
#[example(schema = "ui/schema/no_such_spec.toml")]
struct Mnist {
    label: i64,
}

fn main() {}
