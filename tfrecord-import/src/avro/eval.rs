//! Evaluating key expressions on Avro values: one tree of values per record, one tree level per
//! `[*]` or filter.

use apache_avro::types::Value;

use super::expr::{Branch, KeyExpr, Operand, Step};
use crate::error::{Error, Result};

/// What a key expression finds in one record: a value, a missing value, or (one level per `[*]`
/// or filter) a list of such trees.
#[derive(Debug)]
pub(crate) enum Node<'v> {
    /// A value (never a union: unions are resolved to their active branch).
    Value(&'v Value),
    /// A missing value: a null, an absent map key, an index past the end of an array, a union
    /// whose active branch is not the one selected. The text says which, for an error when no
    /// default applies.
    Missing(String),
    /// The elements of one `[*]` or filter level.
    List(Vec<Node<'v>>),
}

/// The Avro type name of a value, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Boolean(_) => "boolean",
        Value::Int(_) => "int",
        Value::Long(_) => "long",
        Value::Float(_) => "float",
        Value::Double(_) => "double",
        Value::Bytes(_) => "bytes",
        Value::String(_) => "string",
        Value::Fixed(..) => "fixed",
        Value::Enum(..) => "enum",
        Value::Union(..) => "union",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Record(_) => "record",
        Value::Date(_) => "int (date)",
        Value::Decimal(_) | Value::BigDecimal(_) => "decimal",
        Value::TimeMillis(_) => "int (time-millis)",
        Value::TimeMicros(_) => "long (time-micros)",
        Value::TimestampMillis(_) => "long (timestamp-millis)",
        Value::TimestampMicros(_) => "long (timestamp-micros)",
        Value::TimestampNanos(_) => "long (timestamp-nanos)",
        Value::LocalTimestampMillis(_) => "long (local-timestamp-millis)",
        Value::LocalTimestampMicros(_) => "long (local-timestamp-micros)",
        Value::LocalTimestampNanos(_) => "long (local-timestamp-nanos)",
        Value::Duration(_) => "fixed (duration)",
        Value::Uuid(_) => "string (uuid)",
    }
}

/// The active branch of a (possibly nested) union.
pub(crate) fn unwrap_union(mut v: &Value) -> &Value {
    while let Value::Union(_, inner) = v {
        v = inner;
    }
    v
}

fn branch_matches(b: Branch, v: &Value) -> bool {
    matches!(
        (b, v),
        (Branch::Boolean, Value::Boolean(_))
            | (
                Branch::Int,
                Value::Int(_) | Value::Date(_) | Value::TimeMillis(_)
            )
            | (
                Branch::Long,
                Value::Long(_)
                    | Value::TimeMicros(_)
                    | Value::TimestampMillis(_)
                    | Value::TimestampMicros(_)
                    | Value::TimestampNanos(_)
                    | Value::LocalTimestampMillis(_)
                    | Value::LocalTimestampMicros(_)
                    | Value::LocalTimestampNanos(_)
            )
            | (Branch::Float, Value::Float(_))
            | (Branch::Double, Value::Double(_))
            | (Branch::Bytes, Value::Bytes(_) | Value::Decimal(_))
            | (Branch::String, Value::String(_) | Value::Uuid(_))
            | (Branch::Record, Value::Record(_))
            | (Branch::Enum, Value::Enum(..))
            | (Branch::Fixed, Value::Fixed(..) | Value::Duration(_))
            | (Branch::Array, Value::Array(_))
            | (Branch::Map, Value::Map(_))
    )
}

/// A wrong container or leaf kind: `Expected types: 'record' but got type map.`, as tfio says
/// it, with the part of the expression.
fn expected(what: &str, found: &Value, expr: &KeyExpr, part: &str) -> Error {
    Error::new(format!(
        "Expected types: '{what}' but got type {} (at `{part}` of `{expr}`)",
        type_name(found)
    ))
}

/// Evaluates `expr` on `value`; `root` is the record (for `@` paths in filters).
///
/// # Errors
/// A field name the record does not have, a part applied to the wrong kind of value, a filter
/// side that is not a string.
pub(crate) fn eval<'v>(expr: &KeyExpr, value: &'v Value, root: &'v Value) -> Result<Node<'v>> {
    let start = if expr.root { root } else { value };
    walk(expr, &expr.steps, start, root)
}

/// A part of a key expression as written, for messages.
fn describe(step: &Step) -> String {
    match step {
        Step::Field(n) => n.clone(),
        Step::Index(i) => format!("[{i}]"),
        Step::All => "[*]".into(),
        Step::Filter(_) => "[...=...]".into(),
        Step::MapKey(k) => format!("['{k}']"),
        Step::Branch(b) => format!(":{}", b.name()),
    }
}

/// Evaluates the remaining `steps` on `value`, one step at a time.
fn walk<'v>(expr: &KeyExpr, steps: &[Step], value: &'v Value, root: &'v Value) -> Result<Node<'v>> {
    let Some((step, rest)) = steps.split_first() else {
        return Ok(match unwrap_union(value) {
            Value::Null => Node::Missing("the value is null".into()),
            v => Node::Value(v),
        });
    };
    if let Step::Branch(b) = step {
        let v = unwrap_union(value);
        return if branch_matches(*b, v) {
            walk(expr, rest, v, root)
        } else {
            Ok(Node::Missing(format!(
                "the union holds {}, not the branch `:{}`",
                type_name(v),
                b.name()
            )))
        };
    }
    let v = unwrap_union(value);
    if matches!(v, Value::Null) {
        // A null container: no elements for a dimension, a missing value otherwise.
        return Ok(match step {
            Step::All | Step::Filter(_) => Node::List(Vec::new()),
            _ => Node::Missing(format!("the value before `{}` is null", describe(step))),
        });
    }
    match step {
        Step::Field(name) => match v {
            Value::Record(fields) => match fields.iter().find(|(n, _)| n == name) {
                Some((_, inner)) => walk(expr, rest, inner, root),
                None => Err(Error::new(format!(
                    "Unable to find name '{name}'. (in `{expr}`; the record has: {})",
                    fields
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))),
            },
            other => Err(expected("record", other, expr, name)),
        },
        Step::Index(i) => match v {
            Value::Array(items) => match items.get(*i) {
                Some(inner) => walk(expr, rest, inner, root),
                None => Ok(Node::Missing(format!(
                    "Invalid index {i}. Range [0, {}).",
                    items.len()
                ))),
            },
            other => Err(expected("array", other, expr, &describe(step))),
        },
        Step::MapKey(k) => match v {
            Value::Map(m) => match m.get(k) {
                Some(inner) => walk(expr, rest, inner, root),
                None => Ok(Node::Missing(format!("Unable to find key '{k}'."))),
            },
            other => Err(expected("map", other, expr, &describe(step))),
        },
        Step::All => match elements(v) {
            Some(items) => items
                .into_iter()
                .map(|item| walk(expr, rest, item, root))
                .collect::<Result<Vec<_>>>()
                .map(Node::List),
            None => Err(expected("array', 'map", v, expr, "[*]")),
        },
        Step::Filter(f) => match elements(v) {
            Some(items) => {
                let mut kept = Vec::new();
                for item in items {
                    let lhs = operand(expr, &f.lhs, item, root)?;
                    let rhs = operand(expr, &f.rhs, item, root)?;
                    if lhs.is_some() && lhs == rhs {
                        kept.push(walk(expr, rest, item, root)?);
                    }
                }
                Ok(Node::List(kept))
            }
            None => Err(expected("array', 'map", v, expr, "[...=...]")),
        },
        Step::Branch(_) => Ok(Node::Missing(String::new())), // handled above
    }
}

/// The elements `[*]` and filters go over: an array's in order, a map's values in key order
/// (Avro maps have no order of their own).
fn elements(v: &Value) -> Option<Vec<&Value>> {
    match v {
        Value::Array(items) => Some(items.iter().collect()),
        Value::Map(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Some(entries.into_iter().map(|(_, v)| v).collect())
        }
        _ => None,
    }
}

/// The string value of a filter side, `None` when it is missing (a null never matches).
fn operand<'v>(
    expr: &KeyExpr,
    op: &'v Operand,
    item: &'v Value,
    root: &'v Value,
) -> Result<Option<std::borrow::Cow<'v, [u8]>>> {
    use std::borrow::Cow;
    let path = match op {
        Operand::Const(s) => return Ok(Some(Cow::Borrowed(s.as_bytes()))),
        Operand::Path(p) => p,
    };
    let node = eval(path, item, root)?;
    Ok(match node {
        Node::Value(v) => Some(match v {
            Value::String(s) => Cow::Borrowed(s.as_bytes()),
            Value::Bytes(b) | Value::Fixed(_, b) => Cow::Borrowed(&b[..]),
            Value::Enum(_, s) => Cow::Borrowed(s.as_bytes()),
            Value::Uuid(u) => Cow::Owned(u.to_string().into_bytes()),
            other => {
                return Err(Error::new(format!(
                    "the filter side `{path}` in `{expr}` is {}; filters compare strings \
                     (string, bytes, enum or fixed values)",
                    type_name(other)
                )));
            }
        }),
        Node::Missing(_) | Node::List(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(fields: Vec<(&str, Value)>) -> Value {
        Value::Record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    fn s(x: &str) -> Value {
        Value::String(x.into())
    }

    fn leaves(n: &Node<'_>, out: &mut Vec<String>) {
        match n {
            Node::Value(Value::String(s)) => out.push(s.clone()),
            Node::Value(v) => out.push(format!("{v:?}")),
            Node::Missing(h) => out.push(format!("missing: {h}")),
            Node::List(items) => items.iter().for_each(|i| leaves(i, out)),
        }
    }

    fn run(expr: &str, v: &Value) -> Result<Vec<String>> {
        let e = KeyExpr::parse(expr)?;
        let n = eval(&e, v, v)?;
        let mut out = Vec::new();
        leaves(&n, &mut out);
        Ok(out)
    }

    fn person() -> Value {
        let friend = |first: &str, second: &str, gender: &str| {
            rec(vec![
                (
                    "name",
                    rec(vec![("first", s(first)), ("second", s(second))]),
                ),
                ("gender", s(gender)),
            ])
        };
        rec(vec![
            ("name", rec(vec![("first", s("Dave")), ("second", s("X"))])),
            (
                "friends",
                Value::Array(vec![
                    friend("Erin", "E", "unknown"),
                    friend("Dave", "Dave", "male"),
                    friend("Fay", "F", "unknown"),
                ]),
            ),
            ("nick", Value::Union(0, Box::new(Value::Null))),
            ("multi", Value::Union(2, Box::new(s("seven")))),
            (
                "cars",
                Value::Map([("a".to_string(), rec(vec![("color", s("red"))]))].into()),
            ),
        ])
    }

    #[test]
    fn filters_indices_maps_and_branches() {
        let p = person();
        assert_eq!(
            run("friends[gender='unknown'].name.first", &p).unwrap(),
            ["Erin", "Fay"]
        );
        assert_eq!(
            run("friends['unknown'=gender].name.first", &p).unwrap(),
            ["Erin", "Fay"]
        );
        assert_eq!(
            run("friends[name.first=name.second].name.first", &p).unwrap(),
            ["Dave"]
        );
        assert_eq!(
            run("friends[name.first=@name.first].name.second", &p).unwrap(),
            ["Dave"]
        );
        assert_eq!(run("friends[2].name.first", &p).unwrap(), ["Fay"]);
        assert_eq!(
            run("friends[3].name.first", &p).unwrap(),
            ["missing: Invalid index 3. Range [0, 3)."]
        );
        assert_eq!(run("cars['a'].color", &p).unwrap(), ["red"]);
        assert_eq!(
            run("cars['b'].color", &p).unwrap(),
            ["missing: Unable to find key 'b'."]
        );
        assert_eq!(run("multi:string", &p).unwrap(), ["seven"]);
        assert!(run("multi:int", &p).unwrap()[0].starts_with("missing: the union holds string"));
        assert_eq!(run("nick", &p).unwrap(), ["missing: the value is null"]);
        assert_eq!(
            run("nick.x", &p).unwrap(),
            ["missing: the value before `x` is null"]
        );
        let e = run("nam.first", &p).unwrap_err().to_string();
        assert!(e.contains("Unable to find name 'nam'."), "{e}");
        assert_eq!(run("cars[*].color", &p).unwrap(), ["red"]);
        let e = run("name[*]", &p).unwrap_err().to_string();
        assert!(
            e.contains("Expected types: 'array', 'map' but got type record"),
            "{e}"
        );
        let e = run("friends[name=gender]", &p).unwrap_err().to_string();
        assert!(e.contains("filters compare strings"), "{e}");
    }
}
