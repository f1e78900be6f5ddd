use tfrecord_core::Example;

#[derive(Example)]
enum Color {
    #[example(renam = "r")]
    Red,
    Green,
}

fn main() {}
