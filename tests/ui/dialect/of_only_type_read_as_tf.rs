use tfrecord_core::{Example, Reader};

#[derive(Example)]
#[example(dialect = "ofrecord")]
struct Record {
    weight: f64,
}

fn main() {
    for r in Reader::<Record>::open("in.tfrecord").unwrap() {
        let _ = r.unwrap().weight;
    }
}
