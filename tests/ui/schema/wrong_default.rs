use tfrecord_core::Example;

// Defaults that read as the spec's: no error (`0.1` as written in either, one value filling
// a shape or all four written out).
#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml")]
struct Scored {
    #[example(default = 0)]
    label: i64,
    #[example(default = 0.1)]
    score: f32,
    #[example(default = [0.0, 0.0, 0.0, 0.0])]
    r#box: [f32; 4],
}

// Defaults that do not.
#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml", record = "Scored")]
struct Other {
    #[example(default = 5)]
    label: i64,
    #[example(default = 0.2)]
    score: f32,
    #[example(default = [0.0, 0.0, 0.0, 1.0])]
    r#box: [f32; 4],
}

// The field type's `Default` (`#[example(default)]`): zeros match, another value does not.
#[derive(Example)]
#[example(schema = "ui/schema/mnist.toml", record = "Scored")]
struct TypeDefaults {
    #[example(default)]
    label: i64,
    #[example(default)]
    score: f32,
    #[example(default)]
    r#box: [f32; 4],
}

fn main() {}
