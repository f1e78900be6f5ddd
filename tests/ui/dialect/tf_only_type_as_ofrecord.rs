use tfrecord_core::{Encode, Example, OfRecord};

#[derive(Example)]
#[example(dialect = "tf")]
struct Record {
    label: i64,
}

fn main() {
    let bytes = Encode::<OfRecord>::encode_to_vec(&Record { label: 1 });
    let _ = bytes;
}
