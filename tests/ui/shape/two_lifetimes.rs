use tfrecord_core::Example;

#[derive(Example)]
struct Record<'a, 'b> {
    name: &'a str,
    data: &'b [u8],
}

fn main() {}
