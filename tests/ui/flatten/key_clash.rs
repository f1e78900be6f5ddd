use tfrecord_core::Example;

#[derive(Example, Default)]
struct Inner {
    a: i64,
    #[example(key = "b/c")]
    bc: i64,
}

// An own key under a flattened member's prefix that the member writes too.
#[derive(Example)]
struct Own {
    #[example(key = "inner/a")]
    x: i64,
    #[example(flatten)]
    inner: Inner,
}

// Two members flattened under one prefix.
#[derive(Example)]
struct Twice {
    #[example(flatten, key = "p")]
    first: Inner,
    #[example(flatten, key = "p")]
    second: Inner,
}

// A prefix inside another member's prefix: `x/b/c` from both.
#[derive(Example, Default)]
struct C {
    c: i64,
}

#[derive(Example)]
struct Nested<'a> {
    #[example(flatten)]
    x: Inner,
    #[example(flatten, key = "x/b")]
    y: C,
    other: &'a [u8],
}

// Prefixes that only look alike, and keys beside the member's: no clash.
#[derive(Example)]
struct Fine {
    #[example(key = "inner/z")]
    z: i64,
    #[example(key = "inner/b")]
    b: i64,
    #[example(flatten)]
    inner: Inner,
    #[example(flatten, key = "inner2")]
    inner2: Inner,
}

fn main() {}
