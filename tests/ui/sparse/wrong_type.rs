use tfrecord_core::Example;

#[derive(Example)]
struct Clicks {
    #[example(sparse(index = "idx", value = "val"))]
    items: Vec<f32>,
}

fn main() {}
