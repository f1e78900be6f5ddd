use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(kye = "x")]
    label: i64,
    // serde's spelling of a field's name
    #[example(rename = "y")]
    score: f32,
}

fn main() {}
