use tfrecord_core::Example;

#[derive(Example)]
union Bits {
    i: i64,
    f: f64,
}

fn main() {}
