//! Reading one line of JSON Lines into a `serde_json` value, except that a key given twice in an
//! object is refused (as protobuf's `json_format.Parse` refuses it) where `serde_json` keeps the
//! last.

use serde_json::Value as Json;

/// One line of JSON, with a key given twice in an object refused (as protobuf's
/// `json_format.Parse` refuses it) rather than the last one kept.
pub(super) fn json_without_duplicates(line: &[u8]) -> serde_json::Result<Json> {
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
