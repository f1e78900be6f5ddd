use tfrecord_core::Example;

#[derive(Example)]
struct Record {
    #[example(default = 300)]
    n: u8,
    #[example(default = -1)]
    u: u64,
    #[example(default = [1, 2, 65536])]
    v: Vec<u16>,
    #[example(default = 1e39)]
    f: f32,
    #[example(default = -2147483648)]
    ok: i32,
}

fn main() {}
