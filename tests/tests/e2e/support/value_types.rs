//! The derive test types of the value rows of the type mapping (integers and bools, integer
//! lists, floats, doubles, texts, options, enums by name and by discriminant, defaults), each
//! with its model and a proptest strategy.

use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::Example;

use super::model::{Feats, M, Model};

/// A unit-only enum stored by name.
#[derive(Example, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[example(rename_all = "snake_case")]
pub(crate) enum Fruit {
    #[default]
    RedApple,
    Banana,
    #[example(rename = "kiwi!")]
    Kiwi,
}

impl Fruit {
    pub(crate) const ALL: [Fruit; 3] = [Fruit::RedApple, Fruit::Banana, Fruit::Kiwi];
    pub(crate) fn wire(self) -> &'static str {
        match self {
            Fruit::RedApple => "red_apple",
            Fruit::Banana => "banana",
            Fruit::Kiwi => "kiwi!",
        }
    }
}

/// A unit-only enum stored by discriminant.
#[derive(Example, Debug, Clone, Copy, PartialEq, Eq)]
#[example(repr = "int64")]
#[repr(i64)]
pub(crate) enum Level {
    Low = -1,
    Mid,
    High = 10,
    Top = 1_000_000_000_000,
}

impl Level {
    pub(crate) const ALL: [Level; 4] = [Level::Low, Level::Mid, Level::High, Level::Top];
    pub(crate) fn wire(self) -> i64 {
        match self {
            Level::Low => -1,
            Level::Mid => 0,
            Level::High => 10,
            Level::Top => 1_000_000_000_000,
        }
    }
}

/// Every integer and bool scalar.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Ints {
    pub(crate) a_i64: i64,
    pub(crate) a_i32: i32,
    pub(crate) a_i16: i16,
    pub(crate) a_i8: i8,
    pub(crate) a_u8: u8,
    pub(crate) a_u32: u32,
    pub(crate) a_u16: u16,
    pub(crate) a_u64: u64,
    pub(crate) a_bool: bool,
}

impl Model for Ints {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("a_i64", [self.a_i64]);
        m.i32("a_i32", [self.a_i32]);
        m.int("a_i16", [i64::from(self.a_i16)]);
        m.int("a_i8", [i64::from(self.a_i8)]);
        m.int("a_u8", [i64::from(self.a_u8)]);
        m.int("a_u32", [i64::from(self.a_u32)]);
        m.int("a_u16", [i64::from(self.a_u16)]);
        m.int("a_u64", [self.a_u64.cast_signed()]);
        m.int("a_bool", [i64::from(self.a_bool)]);
        m.done()
    }
}

/// A strategy for [`Ints`].
pub(crate) fn ints() -> impl Strategy<Value = Ints> {
    (
        any::<i64>(),
        any::<i32>(),
        any::<i16>(),
        any::<i8>(),
        any::<u8>(),
        any::<u32>(),
        any::<u16>(),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(
            |(a_i64, a_i32, a_i16, a_i8, a_u8, a_u32, a_u16, a_u64, a_bool)| Ints {
                a_i64,
                a_i32,
                a_i16,
                a_i8,
                a_u8,
                a_u32,
                a_u16,
                a_u64,
                a_bool,
            },
        )
}

/// Integer lists and arrays.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct IntLists {
    pub(crate) v_i64: Vec<i64>,
    pub(crate) v_i32: Vec<i32>,
    pub(crate) v_i16: Vec<i16>,
    pub(crate) v_i8: Vec<i8>,
    pub(crate) v_u32: Vec<u32>,
    pub(crate) v_u16: Vec<u16>,
    pub(crate) v_u64: Vec<u64>,
    pub(crate) v_bool: Vec<bool>,
    pub(crate) arr_i64: [i64; 3],
    pub(crate) arr_i32: [i32; 2],
    pub(crate) arr_bool: [bool; 1],
    #[example(shape = [2, 3])]
    pub(crate) mat: Vec<u16>,
}

impl Model for IntLists {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("v_i64", self.v_i64.iter().copied());
        m.i32("v_i32", self.v_i32.iter().copied());
        m.int("v_i16", self.v_i16.iter().map(|&x| i64::from(x)));
        m.int("v_i8", self.v_i8.iter().map(|&x| i64::from(x)));
        m.int("v_u32", self.v_u32.iter().map(|&x| i64::from(x)));
        m.int("v_u16", self.v_u16.iter().map(|&x| i64::from(x)));
        m.int("v_u64", self.v_u64.iter().map(|&x| x.cast_signed()));
        m.int("v_bool", self.v_bool.iter().map(|&x| i64::from(x)));
        m.int("arr_i64", self.arr_i64);
        m.i32("arr_i32", self.arr_i32);
        m.int("arr_bool", self.arr_bool.map(i64::from));
        m.int("mat", self.mat.iter().map(|&x| i64::from(x)));
        m.done()
    }
}

/// A strategy for vectors of up to four elements.
pub(crate) fn small_vec<T: Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Vec<T>> {
    prop::collection::vec(s, 0..5)
}

/// A strategy for [`IntLists`].
pub(crate) fn int_lists() -> impl Strategy<Value = IntLists> {
    (
        (
            small_vec(any::<i64>()),
            small_vec(any::<i32>()),
            small_vec(any::<i16>()),
            small_vec(any::<i8>()),
            small_vec(any::<u32>()),
            small_vec(any::<u16>()),
        ),
        (
            small_vec(any::<u64>()),
            small_vec(any::<bool>()),
            any::<[i64; 3]>(),
            any::<[i32; 2]>(),
            any::<[bool; 1]>(),
            prop::collection::vec(any::<u16>(), 6),
        ),
    )
        .prop_map(
            |(
                (v_i64, v_i32, v_i16, v_i8, v_u32, v_u16),
                (v_u64, v_bool, arr_i64, arr_i32, arr_bool, mat),
            )| IntLists {
                v_i64,
                v_i32,
                v_i16,
                v_i8,
                v_u32,
                v_u16,
                v_u64,
                v_bool,
                arr_i64,
                arr_i32,
                arr_bool,
                mat,
            },
        )
}

/// Floats in both containers; `f64` with `lossy` is a double list in OFRecord and a float list
/// in tf.train.Example.
#[derive(Example, Debug, Clone)]
pub(crate) struct Floats {
    pub(crate) f: f32,
    pub(crate) v: Vec<f32>,
    pub(crate) arr: [f32; 4],
    #[example(shape = [2, 3])]
    pub(crate) mat: Vec<f32>,
    pub(crate) opt: Option<f32>,
    #[example(lossy)]
    pub(crate) d: f64,
    #[example(lossy)]
    pub(crate) dv: Vec<f64>,
    #[example(lossy)]
    pub(crate) da: [f64; 2],
}

impl Model for Floats {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.f32("f", [self.f]);
        m.f32("v", self.v.iter().copied());
        m.f32("arr", self.arr);
        m.f32("mat", self.mat.iter().copied());
        if let Some(x) = self.opt {
            m.f32("opt", [x]);
        }
        m.f64("d", [self.d]);
        m.f64("dv", self.dv.iter().copied());
        m.f64("da", self.da);
        m.done()
    }
}

/// Every `f32` bit pattern: NaNs with any payload, infinities, `-0.0`, subnormals.
pub(crate) fn f32_bits() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

/// Every `f64` bit pattern.
pub(crate) fn f64_bits() -> impl Strategy<Value = f64> {
    any::<u64>().prop_map(f64::from_bits)
}

/// `f64`s without NaN: narrowing a NaN to `f32` does not keep its payload, so a lossy NaN
/// only stays a NaN (checked separately).
pub(crate) fn f64_no_nan() -> BoxedStrategy<f64> {
    f64_bits().prop_filter("not NaN", |d| !d.is_nan()).boxed()
}

/// A strategy for [`Floats`], its `f64`s from `d`.
pub(crate) fn floats(d: impl Strategy<Value = f64> + Clone) -> impl Strategy<Value = Floats> {
    (
        f32_bits(),
        small_vec(f32_bits()),
        prop::array::uniform4(f32_bits()),
        prop::collection::vec(f32_bits(), 6),
        proptest::option::of(f32_bits()),
        d.clone(),
        small_vec(d.clone()),
        prop::array::uniform2(d),
    )
        .prop_map(|(f, v, arr, mat, opt, d, dv, da)| Floats {
            f,
            v,
            arr,
            mat,
            opt,
            d,
            dv,
            da,
        })
}

/// `f64` as OFRecord's double list, exact.
#[derive(Example, Debug, Clone)]
#[example(dialect = "ofrecord")]
pub(crate) struct Doubles {
    pub(crate) d: f64,
    pub(crate) dv: Vec<f64>,
    pub(crate) da: [f64; 3],
    pub(crate) od: Option<f64>,
    pub(crate) i: i32,
    pub(crate) iv: Vec<i32>,
}

impl Model for Doubles {
    fn feats(&self, of: bool) -> Feats {
        assert!(of, "Doubles is OFRecord-only");
        let mut m = M::new(of);
        m.f64("d", [self.d]);
        m.f64("dv", self.dv.iter().copied());
        m.f64("da", self.da);
        if let Some(x) = self.od {
            m.f64("od", [x]);
        }
        m.i32("i", [self.i]);
        m.i32("iv", self.iv.iter().copied());
        m.done()
    }
}

/// Bytes and text in every owned form.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Texts {
    pub(crate) s: String,
    pub(crate) b: Vec<u8>,
    pub(crate) by: bytes::Bytes,
    pub(crate) vs: Vec<String>,
    pub(crate) vb: Vec<Vec<u8>>,
    pub(crate) vby: Vec<bytes::Bytes>,
    pub(crate) arr_s: [String; 2],
    pub(crate) opt_s: Option<String>,
    pub(crate) opt_b: Option<Vec<u8>>,
    #[example(shape = [1, 2])]
    pub(crate) pair: Vec<Vec<u8>>,
}

impl Model for Texts {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("s", [&self.s]);
        m.bytes("b", [&self.b]);
        m.bytes("by", [&self.by]);
        m.bytes("vs", &self.vs);
        m.bytes("vb", &self.vb);
        m.bytes("vby", &self.vby);
        m.bytes("arr_s", &self.arr_s);
        if let Some(s) = &self.opt_s {
            m.bytes("opt_s", [s]);
        }
        if let Some(b) = &self.opt_b {
            m.bytes("opt_b", [b]);
        }
        m.bytes("pair", &self.pair);
        m.done()
    }
}

/// A strategy for short byte strings.
pub(crate) fn blob() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

/// A strategy for [`Texts`].
pub(crate) fn texts() -> impl Strategy<Value = Texts> {
    (
        (
            any::<String>(),
            blob(),
            blob().prop_map(bytes::Bytes::from),
            small_vec(any::<String>()),
            small_vec(blob()),
        ),
        (
            small_vec(blob().prop_map(bytes::Bytes::from)),
            any::<[String; 2]>(),
            proptest::option::of(any::<String>()),
            proptest::option::of(blob()),
            prop::collection::vec(blob(), 2),
        ),
    )
        .prop_map(
            |((s, b, by, vs, vb), (vby, arr_s, opt_s, opt_b, pair))| Texts {
                s,
                b,
                by,
                vs,
                vb,
                vby,
                arr_s,
                opt_s,
                opt_b,
                pair,
            },
        )
}

/// Options of every shape: absent when `None`.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Opts {
    pub(crate) o_i64: Option<i64>,
    pub(crate) o_i32: Option<i32>,
    pub(crate) o_u64: Option<u64>,
    pub(crate) o_bool: Option<bool>,
    pub(crate) o_vec: Option<Vec<i64>>,
    pub(crate) o_arr: Option<[u16; 2]>,
    pub(crate) o_s: Option<String>,
    pub(crate) o_fruit: Option<Fruit>,
    pub(crate) o_levels: Option<Vec<Level>>,
    pub(crate) o_by: Option<bytes::Bytes>,
    #[example(shape = [2])]
    pub(crate) o_shaped: Option<Vec<i8>>,
}

impl Model for Opts {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        if let Some(x) = self.o_i64 {
            m.int("o_i64", [x]);
        }
        if let Some(x) = self.o_i32 {
            m.i32("o_i32", [x]);
        }
        if let Some(x) = self.o_u64 {
            m.int("o_u64", [x.cast_signed()]);
        }
        if let Some(x) = self.o_bool {
            m.int("o_bool", [i64::from(x)]);
        }
        if let Some(x) = &self.o_vec {
            m.int("o_vec", x.iter().copied());
        }
        if let Some(x) = self.o_arr {
            m.int("o_arr", x.map(i64::from));
        }
        if let Some(x) = &self.o_s {
            m.bytes("o_s", [x]);
        }
        if let Some(x) = self.o_fruit {
            m.bytes("o_fruit", [x.wire()]);
        }
        if let Some(x) = &self.o_levels {
            m.int("o_levels", x.iter().map(|l| l.wire()));
        }
        if let Some(x) = &self.o_by {
            m.bytes("o_by", [x]);
        }
        if let Some(x) = &self.o_shaped {
            m.int("o_shaped", x.iter().map(|&v| i64::from(v)));
        }
        m.done()
    }
}

/// A strategy for [`Fruit`].
pub(crate) fn fruit() -> impl Strategy<Value = Fruit> {
    prop::sample::select(&Fruit::ALL[..])
}

/// A strategy for [`Level`].
fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(&Level::ALL[..])
}

/// A strategy for [`Opts`].
pub(crate) fn opts() -> impl Strategy<Value = Opts> {
    use proptest::option::of;
    (
        (
            of(any::<i64>()),
            of(any::<i32>()),
            of(any::<u64>()),
            of(any::<bool>()),
            of(small_vec(any::<i64>())),
            of(any::<[u16; 2]>()),
        ),
        (
            of(any::<String>()),
            of(fruit()),
            of(small_vec(level())),
            of(blob().prop_map(bytes::Bytes::from)),
            of(prop::collection::vec(any::<i8>(), 2)),
        ),
    )
        .prop_map(
            |(
                (o_i64, o_i32, o_u64, o_bool, o_vec, o_arr),
                (o_s, o_fruit, o_levels, o_by, o_shaped),
            )| {
                Opts {
                    o_i64,
                    o_i32,
                    o_u64,
                    o_bool,
                    o_vec,
                    o_arr,
                    o_s,
                    o_fruit,
                    o_levels,
                    o_by,
                    o_shaped,
                }
            },
        )
}

/// Enums as values, lists, arrays, options and defaults.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Enums {
    pub(crate) fruit: Fruit,
    pub(crate) fruits: Vec<Fruit>,
    pub(crate) level: Level,
    pub(crate) levels: [Level; 2],
    #[example(default)]
    pub(crate) fallback: Fruit,
}

impl Model for Enums {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("fruit", [self.fruit.wire()]);
        m.bytes("fruits", self.fruits.iter().map(|f| f.wire()));
        m.int("level", [self.level.wire()]);
        m.int("levels", self.levels.map(Level::wire));
        m.bytes("fallback", [self.fallback.wire()]);
        m.done()
    }
}

/// A strategy for [`Enums`].
pub(crate) fn enums() -> impl Strategy<Value = Enums> {
    (
        fruit(),
        small_vec(fruit()),
        level(),
        prop::array::uniform2(level()),
        fruit(),
    )
        .prop_map(|(fruit, fruits, level, levels, fallback)| Enums {
            fruit,
            fruits,
            level,
            levels,
            fallback,
        })
}

/// Defaults: literals of every kind, and the type's `Default`.
#[derive(Example, Debug, Clone, PartialEq)]
pub(crate) struct Defaults {
    #[example(default = 5)]
    pub(crate) i: i64,
    #[example(default = -7)]
    pub(crate) n: i8,
    #[example(default = 18446744073709551615)]
    pub(crate) big: u64,
    #[example(default = 70000)]
    pub(crate) i32_: i32,
    #[example(default = 0.5)]
    pub(crate) f: f32,
    #[example(default = 2)]
    pub(crate) f_from_int: f32,
    #[example(default = true)]
    pub(crate) b: bool,
    #[example(default = "hi")]
    pub(crate) s: String,
    #[example(default = "raw")]
    pub(crate) by: Vec<u8>,
    #[example(default = "bb")]
    pub(crate) bb: bytes::Bytes,
    #[example(default = [1, 2, 3])]
    pub(crate) v: Vec<i64>,
    #[example(default = [1.5, -2])]
    pub(crate) arr: [f32; 2],
    #[example(shape = [2, 2], default = [[1, 2], [3, 4]])]
    pub(crate) mat: Vec<i32>,
    #[example(default = ["a", "b"])]
    pub(crate) vs: Vec<String>,
    #[example(default = [])]
    pub(crate) empty: Vec<u32>,
    #[example(default)]
    pub(crate) td_i: i64,
    #[example(default)]
    pub(crate) td_s: String,
    #[example(default)]
    pub(crate) td_v: Vec<f32>,
    #[example(default)]
    pub(crate) td_e: Fruit,
}

impl Defaults {
    /// What an empty record decodes to.
    pub(crate) fn absent() -> Self {
        Defaults {
            i: 5,
            n: -7,
            big: u64::MAX,
            i32_: 70000,
            f: 0.5,
            f_from_int: 2.0,
            b: true,
            s: "hi".into(),
            by: b"raw".to_vec(),
            bb: bytes::Bytes::from_static(b"bb"),
            v: vec![1, 2, 3],
            arr: [1.5, -2.0],
            mat: vec![1, 2, 3, 4],
            vs: vec!["a".into(), "b".into()],
            empty: vec![],
            td_i: 0,
            td_s: String::new(),
            td_v: vec![],
            td_e: Fruit::RedApple,
        }
    }
}

impl Model for Defaults {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("i", [self.i]);
        m.int("n", [i64::from(self.n)]);
        m.int("big", [self.big.cast_signed()]);
        m.i32("i32_", [self.i32_]);
        m.f32("f", [self.f]);
        m.f32("f_from_int", [self.f_from_int]);
        m.int("b", [i64::from(self.b)]);
        m.bytes("s", [&self.s]);
        m.bytes("by", [&self.by]);
        m.bytes("bb", [&self.bb]);
        m.int("v", self.v.iter().copied());
        m.f32("arr", self.arr);
        m.i32("mat", self.mat.iter().copied());
        m.bytes("vs", &self.vs);
        m.int("empty", self.empty.iter().map(|&x| i64::from(x)));
        m.int("td_i", [self.td_i]);
        m.bytes("td_s", [&self.td_s]);
        m.f32("td_v", self.td_v.iter().copied());
        m.bytes("td_e", [self.td_e.wire()]);
        m.done()
    }
}

/// An [`Ints`] with a value in every field, varied by `k`.
pub(crate) fn sample_ints(k: i64) -> Ints {
    Ints {
        a_i64: -k,
        a_i32: 7,
        a_i16: -300,
        a_i8: 5,
        a_u8: 200,
        a_u32: 4_000_000_000,
        a_u16: 65_000,
        a_u64: u64::MAX - 1,
        a_bool: k % 2 == 0,
    }
}

impl IntLists {
    /// An [`IntLists`] with empty lists, and zeros where the count is fixed.
    pub(crate) fn default_value() -> Self {
        IntLists {
            v_i64: vec![],
            v_i32: vec![],
            v_i16: vec![],
            v_i8: vec![],
            v_u32: vec![],
            v_u16: vec![],
            v_u64: vec![],
            v_bool: vec![],
            arr_i64: [0; 3],
            arr_i32: [0; 2],
            arr_bool: [false],
            mat: vec![0; 6],
        }
    }
}

/// An [`Opts`] with every field `None`.
pub(crate) fn opts_all_none() -> Opts {
    Opts {
        o_i64: None,
        o_i32: None,
        o_u64: None,
        o_bool: None,
        o_vec: None,
        o_arr: None,
        o_s: None,
        o_fruit: None,
        o_levels: None,
        o_by: None,
        o_shaped: None,
    }
}
