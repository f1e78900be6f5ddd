use tfrecord_core::{Example, Reader, Writer};

#[derive(Example)]
struct Record {
    #[example(kye = "label")]
    label: i64,
}

fn main() {
    let mut w = Writer::<Record>::create("out.tfrecord").unwrap();
    w.write(&Record { label: 1 }).unwrap();
    for r in Reader::<Record>::open("out.tfrecord").unwrap() {
        let _ = r.unwrap().label;
    }
}
