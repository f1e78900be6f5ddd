use tfrecord_core::Example;

#[derive(Example)]
#[example(rename_all = "camelcase")]
struct Record {
    image_width: i64,
}

fn main() {}
