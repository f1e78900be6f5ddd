use tfrecord_core::{Example, Writer};

#[derive(Example)]
#[example(dialect = "ofrecord")]
struct Record {
    weight: f64,
}

fn main() {
    let _ = Writer::<Record>::create("out.tfrecord");
}
