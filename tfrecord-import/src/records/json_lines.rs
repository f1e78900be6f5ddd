//! Reading one line of JSON Lines into a `serde_json` value, except that a key given twice in an
//! object is refused (as protobuf's `json_format.Parse` refuses it) where `serde_json` keeps the
//! last, and that the integer literal `-0` is the integer 0 (as Python's `json` reads it) where
//! `serde_json` gives the float -0.0.

use std::cell::Cell;

use serde_json::Value as Json;

thread_local! {
    /// Whether the line being parsed gave the float -0.0.
    static NEGATIVE_ZERO: Cell<bool> = const { Cell::new(false) };
}

/// One line of JSON, with a key given twice in an object refused (as protobuf's
/// `json_format.Parse` refuses it) rather than the last one kept, and each integer literal
/// `-0` read as the integer 0: `serde_json` reads it as the float -0.0, which would make its
/// field a float list (and round every large integer of that field to a float).
pub(super) fn json_without_duplicates(line: &[u8]) -> serde_json::Result<Json> {
    NEGATIVE_ZERO.set(false);
    let v = parse_checked(line)?;
    if !NEGATIVE_ZERO.get() {
        return Ok(v);
    }
    let mut fixed: Option<Vec<u8>> = None;
    for (start, end) in number_tokens(line) {
        if &line[start..end] == b"-0" {
            fixed.get_or_insert_with(|| line.to_vec())[start] = b' ';
        }
    }
    match fixed {
        Some(fixed) => parse_checked(&fixed),
        None => Ok(v),
    }
}

/// Where each number literal of a JSON line lies (outside strings), as `(start, end)`.
pub(super) fn number_tokens(line: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < line.len() {
            match line[i] {
                b'"' => {
                    i += 1;
                    while i < line.len() {
                        match line[i] {
                            b'\\' => i += 2,
                            b'"' => {
                                i += 1;
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    i += 1;
                    while i < line.len()
                        && matches!(line[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                    {
                        i += 1;
                    }
                    return Some((start, i));
                }
                _ => i += 1,
            }
        }
        None
    })
}

fn parse_checked(line: &[u8]) -> serde_json::Result<Json> {
    use serde::de::{Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

    struct Checked(Json);

    impl<'de> Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
            d.deserialize_any(CheckedVisitor)
        }
    }

    struct CheckedVisitor;

    impl<'de> Visitor<'de> for CheckedVisitor {
        type Value = Checked;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::from(v)))
        }
        fn visit_u64<E>(self, v: u64) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::from(v)))
        }
        fn visit_f64<E>(self, v: f64) -> std::result::Result<Checked, E> {
            if v == 0.0 && v.is_sign_negative() {
                NEGATIVE_ZERO.set(true);
            }
            Ok(Checked(
                serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number),
            ))
        }
        fn visit_str<E>(self, v: &str) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::String(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::String(v)))
        }
        fn visit_unit<E>(self) -> std::result::Result<Checked, E> {
            Ok(Checked(Json::Null))
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Checked, A::Error> {
            let mut items = Vec::new();
            while let Some(Checked(v)) = seq.next_element()? {
                items.push(v);
            }
            Ok(Checked(Json::Array(items)))
        }
        fn visit_map<A: MapAccess<'de>>(
            self,
            mut map: A,
        ) -> std::result::Result<Checked, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let Checked(v) = map.next_value()?;
                if out.contains_key(&key) {
                    return Err(A::Error::custom(format!("duplicate key {key:?}")));
                }
                out.insert(key, v);
            }
            Ok(Checked(Json::Object(out)))
        }
    }

    serde_json::from_slice::<Checked>(line).map(|Checked(v)| v)
}
