//! The writer schema as schema resolution sees it, for what the `apache-avro` crate's resolution
//! does not do itself:
//!
//! - **Aliases and unqualified names.** Avro's resolution rules let a reader's named type or
//!   field list aliases, the names a writer may have used for it; the writer's names are then
//!   read as the reader's (as the Java implementation's `Schema.applyAliases` does). And named
//!   types match by unqualified name (`a.R` reads as `b.R`). The copy renames every named type
//!   of the writer whose full name is an alias of a reader type, or that the reader does not
//!   define but has one type of the same unqualified name, to that reader type; and every
//!   field of a record the reader has that is named by an alias of one of the reader's fields,
//!   unless the writer has a field of that reader field's own name (which it then reads).
//! - **Promotions of annotated integers.** A writer's `int` or `long` with a logical type
//!   (`date`, `time-millis`, `timestamp-micros`, ...) reads as its plain type where the reader
//!   says so (a `date` read as `long`); the crate decodes the annotated value and then refuses
//!   to promote it. The copy drops those annotations: the crate then decodes plain integers,
//!   which it resolves to the reader's type, logical or not.
//!
//! Only names and annotations change, never a type: the copy decodes the same bytes, so it is
//! used to decode and resolve, while the writer schema itself walks (checks) each record.

use std::collections::{HashMap, HashSet};

use apache_avro::Schema;
use serde_json::{Map, Value as Json};

use crate::error::{Error, Result};

/// The logical types of `int` and `long` that the copy drops.
const INTEGER_LOGICAL_TYPES: [&str; 9] = [
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "timestamp-nanos",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "local-timestamp-nanos",
];

const PRIMITIVES: [&str; 8] = [
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
];

/// What the reader schema names: its types' aliases, and its records' fields and their
/// aliases.
#[derive(Default)]
struct ReaderNames {
    /// A full name a writer may use, to the reader type's full name.
    types: HashMap<String, String>,
    /// The reader's named types' full names.
    defined: HashSet<String>,
    /// A reader type's unqualified name, to its full name (`None` when two types share it).
    short: HashMap<String, Option<String>>,
    /// A reader record's full name, to its field names and a map of its fields' aliases.
    fields: HashMap<String, (HashSet<String>, HashMap<String, String>)>,
}

/// The writer schema with the reader's aliases applied and integer annotations dropped (see
/// the [module](self) docs).
///
/// A writer type is never renamed onto a name the writer defines itself, nor onto one another
/// writer type took: such a type keeps its name (and resolution says whether it reads).
///
/// # Errors
/// A schema that does not serialize to JSON, or whose renamed copy does not parse or names
/// one type twice.
pub(super) fn resolving_writer(writer: &Schema, reader: &Schema) -> Result<Schema> {
    let json = |s: &Schema| {
        serde_json::to_value(s).map_err(|e| Error::new(format!("cannot read a schema: {e}")))
    };
    let mut names = ReaderNames::default();
    collect(&json(reader)?, "", &mut names);
    let mut copy = json(writer)?;
    let mut defined = Vec::new();
    definitions(&copy, "", &mut defined);
    let own: HashSet<&String> = defined.iter().collect();
    let mut renames = HashMap::new();
    let mut taken = HashSet::new();
    for full in &defined {
        let to = names.target(full);
        let to = if to != *full && (own.contains(&to) || taken.contains(&to)) {
            full.clone()
        } else {
            to
        };
        taken.insert(to.clone());
        renames.insert(full.clone(), to);
    }
    rewrite(&mut copy, "", &names, &renames);
    let not_a_schema = |e: apache_avro::Error| {
        Error::new(format!(
            "the writer schema with the reader schema's aliases applied is not a schema: {}",
            super::file::with_causes(&e)
        ))
    };
    let copy = Schema::parse(&copy).map_err(not_a_schema)?;
    apache_avro::schema::ResolvedSchema::try_from(&copy).map_err(not_a_schema)?;
    Ok(copy)
}

/// The full names of the named types a schema's JSON defines, in order.
fn definitions(v: &Json, ns: &str, out: &mut Vec<String>) {
    match v {
        Json::Array(branches) => branches.iter().for_each(|b| definitions(b, ns, out)),
        Json::Object(def) if is_named_definition(def) => {
            let Some(full) = defined_name(def, ns) else {
                return;
            };
            let inner = namespace_of(&full).to_string();
            out.push(full);
            for field in def
                .get("fields")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(t) = field.get("type") {
                    definitions(t, &inner, out);
                }
            }
        }
        Json::Object(def) => {
            for key in ["type", "items", "values"] {
                if let Some(inner) = def.get(key) {
                    definitions(inner, ns, out);
                }
            }
        }
        _ => {}
    }
}

/// `name` in namespace `ns`, as a full name.
fn qualify(name: &str, ns: &str) -> String {
    if name.contains('.') || ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}.{name}")
    }
}

/// The namespace of a full name (empty for none).
fn namespace_of(full: &str) -> &str {
    full.rsplit_once('.').map_or("", |(ns, _)| ns)
}

/// The unqualified part of a full name.
fn short_name(full: &str) -> &str {
    full.rsplit_once('.').map_or(full, |(_, name)| name)
}

impl ReaderNames {
    /// The reader type a writer type of full name `full` reads as: the one one of whose
    /// aliases it is; else its own name, when the reader defines it; else the reader type of
    /// the same unqualified name, when there is one (Avro matches named types by unqualified
    /// name); else its own name.
    fn target(&self, full: &str) -> String {
        if let Some(to) = self.types.get(full) {
            return to.clone();
        }
        if self.defined.contains(full) {
            return full.to_string();
        }
        match self.short.get(short_name(full)) {
            Some(Some(to)) => to.clone(),
            _ => full.to_string(),
        }
    }
}

/// The full name a named type's definition gives itself, in enclosing namespace `ns`.
fn defined_name(def: &Map<String, Json>, ns: &str) -> Option<String> {
    let name = def.get("name")?.as_str()?;
    let ns = def.get("namespace").and_then(Json::as_str).unwrap_or(ns);
    Some(qualify(name, ns))
}

fn is_named_definition(def: &Map<String, Json>) -> bool {
    matches!(
        def.get("type").and_then(Json::as_str),
        Some("record" | "error" | "enum" | "fixed")
    )
}

fn strings(v: Option<&Json>) -> impl Iterator<Item = &str> {
    v.and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
}

/// Gathers the reader's names from its schema's JSON, in enclosing namespace `ns`.
fn collect(v: &Json, ns: &str, names: &mut ReaderNames) {
    match v {
        Json::Array(branches) => branches.iter().for_each(|b| collect(b, ns, names)),
        Json::Object(def) if is_named_definition(def) => {
            let Some(full) = defined_name(def, ns) else {
                return;
            };
            let inner = namespace_of(&full).to_string();
            // A type's aliases are relative to its own namespace.
            for alias in strings(def.get("aliases")) {
                names.types.insert(qualify(alias, &inner), full.clone());
            }
            names.defined.insert(full.clone());
            names
                .short
                .entry(short_name(&full).to_string())
                .and_modify(|f| *f = None)
                .or_insert_with(|| Some(full.clone()));
            let mut own = HashSet::new();
            let mut aliases = HashMap::new();
            for field in def
                .get("fields")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = field.get("name").and_then(Json::as_str) else {
                    continue;
                };
                own.insert(name.to_string());
                for alias in strings(field.get("aliases")) {
                    aliases.insert(alias.to_string(), name.to_string());
                }
                if let Some(t) = field.get("type") {
                    collect(t, &inner, names);
                }
            }
            if def.contains_key("fields") {
                names.fields.insert(full, (own, aliases));
            }
        }
        Json::Object(def) => {
            for key in ["type", "items", "values"] {
                if let Some(inner) = def.get(key) {
                    collect(inner, ns, names);
                }
            }
        }
        _ => {}
    }
}

/// Rewrites a writer schema's JSON in place, in enclosing namespace `ns`: every name made
/// full, renamed by the reader's aliases; integer annotations dropped.
fn rewrite(v: &mut Json, ns: &str, names: &ReaderNames, renames: &HashMap<String, String>) {
    let rename = |full: String| renames.get(&full).cloned().unwrap_or(full);
    match v {
        Json::String(name) if !PRIMITIVES.contains(&name.as_str()) => {
            *name = rename(qualify(name, ns));
        }
        Json::Array(branches) => branches
            .iter_mut()
            .for_each(|b| rewrite(b, ns, names, renames)),
        Json::Object(def) if is_named_definition(def) => {
            let Some(full) = defined_name(def, ns) else {
                return;
            };
            // Names inside are relative to the namespace the writer gave them.
            let inner = namespace_of(&full).to_string();
            let renamed = rename(full);
            def.insert("name".into(), Json::String(renamed.clone()));
            def.remove("namespace");
            def.remove("aliases");
            let reader_fields = names.fields.get(&renamed);
            if let Some(Json::Array(fields)) = def.get_mut("fields") {
                // A reader field takes a writer field by its own name first, by an alias only
                // when the writer has no field of that name, and from one writer field only.
                let mut taken: HashSet<String> = fields
                    .iter()
                    .filter_map(|f| f.get("name").and_then(Json::as_str))
                    .map(str::to_owned)
                    .collect();
                for field in fields {
                    let Json::Object(field) = field else {
                        continue;
                    };
                    field.remove("aliases");
                    if let Some((own, aliases)) = reader_fields
                        && let Some(Json::String(name)) = field.get_mut("name")
                        && !own.contains(name.as_str())
                        && let Some(to) = aliases.get(name.as_str())
                        && taken.insert(to.clone())
                    {
                        *name = to.clone();
                    }
                    if let Some(t) = field.get_mut("type") {
                        rewrite(t, &inner, names, renames);
                    }
                }
            }
        }
        Json::Object(def) => {
            let integer = matches!(def.get("type").and_then(Json::as_str), Some("int" | "long"));
            let annotated = def
                .get("logicalType")
                .and_then(Json::as_str)
                .is_some_and(|l| INTEGER_LOGICAL_TYPES.contains(&l));
            if integer && annotated {
                def.remove("logicalType");
            }
            for key in ["type", "items", "values"] {
                match def.get_mut(key) {
                    // `{"type": "array", "items": ...}`: a keyword, not a name.
                    Some(Json::String(t)) if key == "type" && (t == "array" || t == "map") => {}
                    Some(inner) => rewrite(inner, ns, names, renames),
                    None => {}
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(json: &str) -> Schema {
        Schema::parse_str(json).unwrap()
    }

    #[test]
    fn reader_aliases_rename_the_writers_types_and_fields() {
        let writer = schema(
            r#"{"type": "record", "name": "P", "namespace": "ns.a", "fields": [
                {"name": "s", "type": "string"},
                {"name": "inner", "type": {"type": "record", "name": "In", "fields": [
                    {"name": "x", "type": "long"}]}},
                {"name": "again", "type": ["null", "In"]},
                {"name": "list", "type": {"type": "array", "items": "In"}},
                {"name": "map", "type": {"type": "map", "values": "string"}}]}"#,
        );
        let reader = schema(
            r#"{"type": "record", "name": "Q", "namespace": "ns.a", "aliases": ["ns.a.P"],
                "fields": [
                {"name": "s2", "aliases": ["s"], "type": "string"},
                {"name": "inner", "type": {"type": "record", "name": "In2",
                    "namespace": "other", "aliases": ["ns.a.In"], "fields": [
                    {"name": "y", "aliases": ["x"], "type": "long"}]}},
                {"name": "again", "type": ["null", "other.In2"]},
                {"name": "list", "type": {"type": "array", "items": "other.In2"}},
                {"name": "map", "type": {"type": "map", "values": "string"}}]}"#,
        );
        let copy = serde_json::to_value(resolving_writer(&writer, &reader).unwrap()).unwrap();
        assert_eq!(copy["name"], "Q");
        assert_eq!(copy["namespace"], "ns.a");
        assert_eq!(copy["fields"][0]["name"], "s2");
        assert_eq!(copy["fields"][1]["type"]["name"], "In2");
        assert_eq!(copy["fields"][1]["type"]["namespace"], "other");
        assert_eq!(copy["fields"][1]["type"]["fields"][0]["name"], "y");
        assert_eq!(copy["fields"][2]["type"][1], "other.In2");
        assert_eq!(copy["fields"][3]["type"]["type"], "array");
        assert_eq!(copy["fields"][3]["type"]["items"], "other.In2");
        assert_eq!(copy["fields"][4]["type"]["type"], "map");
    }

    /// Named types match by unqualified name when the reader has one of that name; a field
    /// alias never makes two fields of one name.
    #[test]
    fn types_match_by_unqualified_name_and_aliases_take_free_names_only() {
        let writer = schema(
            r#"{"type": "record", "name": "R", "namespace": "a", "fields": [
                {"name": "x", "type": "long"},
                {"name": "z", "type": "long"},
                {"name": "p", "type": {"type": "record", "name": "P", "fields": [
                    {"name": "q", "type": "long"}]}},
                {"name": "p2", "type": "P"}]}"#,
        );
        let reader = schema(
            r#"{"type": "record", "name": "R", "namespace": "b", "fields": [
                {"name": "z", "aliases": ["x"], "type": "long"},
                {"name": "p", "type": {"type": "record", "name": "P", "fields": [
                    {"name": "q", "type": "long"}]}},
                {"name": "p2", "type": "b.P"}]}"#,
        );
        let copy = serde_json::to_value(resolving_writer(&writer, &reader).unwrap()).unwrap();
        assert_eq!(copy["namespace"], "b");
        assert_eq!(copy["fields"][0]["name"], "x", "z is the writer's own z");
        assert_eq!(copy["fields"][1]["name"], "z");
        assert_eq!(copy["fields"][2]["type"]["namespace"], "b");
        assert_eq!(copy["fields"][3]["type"], "b.P");
    }

    /// No writer type is renamed onto a name the writer defines, nor two onto one name.
    #[test]
    fn renames_never_make_two_types_of_one_name() {
        let writer = schema(
            r#"{"type": "record", "name": "R", "namespace": "a", "fields": [
                {"name": "p", "type": {"type": "record", "name": "P", "fields": [
                    {"name": "v", "type": "long"}]}},
                {"name": "q", "type": {"type": "record", "name": "P", "namespace": "b",
                    "fields": [{"name": "w", "type": "long"}]}},
                {"name": "u", "type": {"type": "record", "name": "P", "namespace": "c",
                    "fields": [{"name": "x", "type": "long"}]}}]}"#,
        );
        // The reader has `b.P` only: `a.P` and `c.P` keep their names.
        let reader = schema(
            r#"{"type": "record", "name": "R", "namespace": "a", "fields": [
                {"name": "q", "type": {"type": "record", "name": "P", "namespace": "b",
                    "fields": [{"name": "w", "type": "long"}]}}]}"#,
        );
        let copy = serde_json::to_value(resolving_writer(&writer, &reader).unwrap()).unwrap();
        let names: Vec<_> = (0..3)
            .map(|i| {
                let t = &copy["fields"][i]["type"];
                format!(
                    "{}.{}",
                    t["namespace"].as_str().unwrap_or(""),
                    t["name"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(names, ["a.P", "b.P", "c.P"]);
        // A reader `d.P` alone: the first writer type of that short name takes it.
        let reader = schema(
            r#"{"type": "record", "name": "R", "namespace": "a", "fields": [
                {"name": "p", "type": {"type": "record", "name": "P", "namespace": "d",
                    "fields": [{"name": "v", "type": "long"}]}}]}"#,
        );
        let copy = serde_json::to_value(resolving_writer(&writer, &reader).unwrap()).unwrap();
        assert_eq!(copy["fields"][0]["type"]["namespace"], "d");
        assert_eq!(copy["fields"][1]["type"]["namespace"], "b");
        assert_eq!(copy["fields"][2]["type"]["namespace"], "c");
    }

    #[test]
    fn integer_annotations_are_dropped_and_others_kept() {
        let writer = schema(
            r#"{"type": "record", "name": "R", "fields": [
                {"name": "d", "type": {"type": "int", "logicalType": "date"}},
                {"name": "t", "type": {"type": "long", "logicalType": "timestamp-micros"}},
                {"name": "u", "type": {"type": "string", "logicalType": "uuid"}}]}"#,
        );
        let copy = serde_json::to_value(resolving_writer(&writer, &writer).unwrap()).unwrap();
        assert_eq!(copy["fields"][0]["type"], "int");
        assert_eq!(copy["fields"][1]["type"], "long");
        assert_eq!(copy["fields"][2]["type"]["logicalType"], "uuid");
    }
}
