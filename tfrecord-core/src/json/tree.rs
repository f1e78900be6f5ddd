//! A JSON document as the parsers here read it: strings borrowed from the text where they have
//! no escapes, objects as lists of members, numbers as `serde_json` reads them. Reading a line
//! into this takes a fraction of the allocations of a [`serde_json::Value`] (no map nodes, no
//! copies of keys or of base64 strings), and a `Value` is viewed as one without copying.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON number: as `serde_json` gives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    I64(i64),
    U64(u64),
    F64(f64),
}

impl Number {
    pub(crate) fn as_i64(self) -> Option<i64> {
        match self {
            Number::I64(i) => Some(i),
            Number::U64(u) => i64::try_from(u).ok(),
            Number::F64(_) => None,
        }
    }

    pub(crate) fn as_u64(self) -> Option<u64> {
        match self {
            Number::I64(i) => u64::try_from(i).ok(),
            Number::U64(u) => Some(u),
            Number::F64(_) => None,
        }
    }

    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn as_f64(self) -> Option<f64> {
        Some(match self {
            Number::I64(i) => i as f64,
            Number::U64(u) => u as f64,
            Number::F64(f) => f,
        })
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Number::I64(i) => write!(f, "{i}"),
            Number::U64(u) => write!(f, "{u}"),
            Number::F64(x) => match serde_json::Number::from_f64(x) {
                Some(n) => write!(f, "{n}"),
                None => write!(f, "{x}"),
            },
        }
    }
}

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tree<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Tree<'a>>),
    /// Members in document order; a key written twice is kept twice (readers keep the last,
    /// as a JSON object's value does).
    Object(Vec<(Cow<'a, str>, Tree<'a>)>),
}

impl<'a> Tree<'a> {
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Tree::Null)
    }

    /// A `serde_json::Value` seen as a tree, borrowing its strings.
    pub(crate) fn of(v: &'a serde_json::Value) -> Self {
        use serde_json::Value;
        match v {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => Tree::Number(if let Some(i) = n.as_i64() {
                Number::I64(i)
            } else if let Some(u) = n.as_u64() {
                Number::U64(u)
            } else {
                Number::F64(n.as_f64().unwrap_or(f64::NAN))
            }),
            Value::String(s) => Tree::String(Cow::Borrowed(s)),
            Value::Array(a) => Tree::Array(a.iter().map(Tree::of).collect()),
            Value::Object(m) => Tree::Object(
                m.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Tree::of(v)))
                    .collect(),
            ),
        }
    }
}

impl fmt::Display for Tree<'_> {
    /// Compact JSON text, as `serde_json` prints a value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Null => f.write_str("null"),
            Tree::Bool(b) => write!(f, "{b}"),
            Tree::Number(n) => write!(f, "{n}"),
            Tree::String(s) => {
                f.write_str(&serde_json::to_string(s.as_ref()).map_err(|_| fmt::Error)?)
            }
            Tree::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Tree::Object(members) => {
                f.write_str("{")?;
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    let key = serde_json::to_string(k.as_ref()).map_err(|_| fmt::Error)?;
                    write!(f, "{key}:{v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Tree<'de>, E> {
        Ok(Tree::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Tree<'de>, E> {
        Ok(Tree::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Tree<'de>, E> {
        Ok(Tree::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Tree<'de>, E> {
        Ok(Tree::Number(Number::I64(i)))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Tree<'de>, E> {
        Ok(Tree::Number(Number::U64(u)))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Tree<'de>, E> {
        Ok(Tree::Number(Number::F64(x)))
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Tree<'de>, E> {
        Ok(Tree::String(Cow::Borrowed(s)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Tree<'de>, E> {
        Ok(Tree::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Tree<'de>, E> {
        Ok(Tree::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            members.push((key.0, map.next_value()?));
        }
        Ok(Tree::Object(members))
    }
}

impl<'de> Deserialize<'de> for Tree<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}
