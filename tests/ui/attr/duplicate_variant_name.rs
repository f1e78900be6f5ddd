use tfrecord_core::Example;

// Two variants stored under one name: reading would give the first for both.
#[derive(Example)]
enum Level {
    Low,
    #[example(rename = "Low")]
    High,
}

#[derive(Example)]
#[example(rename_all = "lowercase")]
enum Mode {
    Fast,
    FAST,
    #[example(rename = "slow", rename = "quick")]
    Slow,
}

fn main() {}
