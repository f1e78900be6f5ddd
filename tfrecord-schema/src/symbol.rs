//! The one vocabulary of attribute names and spec keys, shared by the derive's parser, the
//! TOML front end, their did-you-mean suggestions and the documentation; and the rules that
//! turn feature keys into Rust names.

/// Attributes on a struct or enum: `#[example(...)]`.
pub const CONTAINER: &[&str] = &[
    "rename_all",
    "dialect",
    "deny_unknown_keys",
    "crate",
    "repr",
    "schema",
    "record",
];

/// Attributes on a field: `#[example(...)]`.
pub const FIELD: &[&str] = &[
    "key", "skip", "default", "required", "shape", "flatten", "lossy", "sequence", "sparse",
];

/// Arguments of a field's `sparse(...)` attribute.
pub const SPARSE: &[&str] = &["index", "value", "size", "already_sorted"];

/// Attributes on an enum variant: `#[example(...)]`.
pub const VARIANT: &[&str] = &["rename"];

/// The `rename_all` rules.
pub const RENAME_RULES: &[&str] = &[
    "lowercase",
    "UPPERCASE",
    "PascalCase",
    "camelCase",
    "snake_case",
    "SCREAMING_SNAKE_CASE",
    "kebab-case",
    "SCREAMING-KEBAB-CASE",
];

/// Top-level keys of a TOML spec.
pub const SPEC_TOP: &[&str] = &["records"];

/// Keys of a record table, `[records.NAME]`.
pub const SPEC_RECORD: &[&str] = &[
    "kind",
    "dialect",
    "deny_unknown_keys",
    "doc",
    "features",
    "context",
    "sequence",
];

/// The record kinds of a spec: `kind = "example"` (the default) or `"sequence_example"`.
pub const SPEC_RECORD_KINDS: &[&str] = &["example", "sequence_example"];

/// Keys of a feature table, `[records.NAME.features.KEY]`.
pub const SPEC_FEATURE: &[&str] = &[
    "dtype",
    "kind",
    "shape",
    "default",
    "optional",
    "field",
    "doc",
    "lossy",
    "index_key",
    "value_key",
    "size",
    "already_sorted",
    "allow_missing",
    "rank",
    "partitions",
    "row_splits_dtype",
    "source",
];

/// The feature kinds of a spec, as TensorFlow names them: `fixed` (`FixedLenFeature`), `var`
/// (`VarLenFeature`), `sparse` (`SparseFeature`), `sequence` (`FixedLenSequenceFeature`),
/// `ragged` (`RaggedFeature`).
pub const SPEC_KINDS: &[&str] = &["fixed", "var", "sparse", "sequence", "ragged"];

/// The dtypes of a spec.
pub const SPEC_DTYPES: &[&str] = &[
    "int64", "int32", "bool", "float", "double", "bytes", "string",
];

/// The row partitions of a ragged feature, outermost first in `partitions = [...]`.
pub const SPEC_PARTITIONS: &[&str] = &[
    "row_splits",
    "row_lengths",
    "row_starts",
    "row_limits",
    "value_rowids",
    "uniform_row_length",
];

/// Rust's keywords (strict and reserved, every edition): a field with one of these names is
/// written as a raw identifier (`r#type`).
pub const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers: a field name derived from one gets a `_` suffix.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Whether `name` is an ASCII identifier (letters, digits, `_`; not starting with a digit;
/// not `_` alone). Keywords count: they are written raw.
fn is_ascii_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
}

/// Whether `name` can be a Rust field name (written raw if it is a keyword).
pub fn is_field_name(name: &str) -> bool {
    is_ascii_ident(name) && !NOT_RAW.contains(&name)
}

/// Whether `name` can be a Rust type name: an identifier in UpperCamelCase (starting with an
/// upper-case letter), and not a keyword.
pub fn is_type_name(name: &str) -> bool {
    is_ascii_ident(name)
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && !KEYWORDS.contains(&name)
}

/// Whether `name` must be written as a raw identifier (`r#type`).
pub fn needs_raw(name: &str) -> bool {
    KEYWORDS.contains(&name) && !NOT_RAW.contains(&name)
}

/// The Rust field name for a feature key: characters other than ASCII letters and digits
/// become word breaks, words are joined in snake_case (`image/encoded` -> `image_encoded`,
/// `imageFormat` -> `image_format`), a leading digit gets a `_` prefix (`3d` -> `_3d`) and
/// `self`, `super`, `crate` get a `_` suffix. Other keywords stay (written raw, `r#type`).
/// `None` when nothing is left (`"/"`, a key of only non-ASCII letters).
pub fn field_name(key: &str) -> Option<String> {
    let cleaned: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let snake = rename("snake_case", &cleaned);
    if snake.is_empty() {
        return None;
    }
    let name = if snake.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{snake}")
    } else {
        snake
    };
    Some(if NOT_RAW.contains(&name.as_str()) {
        format!("{name}_")
    } else {
        name
    })
}

/// The UpperCamelCase spelling of a name, for suggesting a record name.
pub fn type_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    rename("PascalCase", &cleaned)
}

/// The closest candidate to `word` within a small edit distance, for "did you mean" hints.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (word.len() / 3).max(1) + usize::from(word.len() > 6);
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters (`kye` -> `key`) each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Applies a `rename_all` rule to a snake_case field name or a PascalCase variant name.
pub fn rename(rule: &str, name: &str) -> String {
    let words = split_words(name);
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    let cap = |w: &String| {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    match rule {
        "lowercase" => lower.concat(),
        "UPPERCASE" => lower.concat().to_uppercase(),
        "PascalCase" => lower.iter().map(cap).collect(),
        "camelCase" => lower
            .iter()
            .enumerate()
            .map(|(i, w)| if i == 0 { w.clone() } else { cap(w) })
            .collect(),
        "snake_case" => lower.join("_"),
        "SCREAMING_SNAKE_CASE" => lower.join("_").to_uppercase(),
        "kebab-case" => lower.join("-"),
        "SCREAMING-KEBAB-CASE" => lower.join("-").to_uppercase(),
        _ => name.to_string(),
    }
}

fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    for ch in name.chars() {
        if ch == '_' || ch == '-' {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else if ch.is_uppercase() && !cur.is_empty() && !cur.ends_with(|c: char| c.is_uppercase())
        {
            words.push(std::mem::take(&mut cur));
            cur.push(ch);
        } else {
            cur.push(ch);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("kye", FIELD), Some("key"));
        assert_eq!(did_you_mean("defualt", FIELD), Some("default"));
        assert_eq!(did_you_mean("flaten", FIELD), Some("flatten"));
        assert_eq!(did_you_mean("zzzzzz", FIELD), None);
    }

    #[test]
    fn field_names() {
        assert_eq!(
            field_name("image/encoded").as_deref(),
            Some("image_encoded")
        );
        assert_eq!(
            field_name("image/class/label").as_deref(),
            Some("image_class_label")
        );
        assert_eq!(field_name("imageFormat").as_deref(), Some("image_format"));
        assert_eq!(field_name("3d/points").as_deref(), Some("_3d_points"));
        assert_eq!(field_name("type").as_deref(), Some("type"));
        assert!(needs_raw("type"));
        assert_eq!(field_name("self").as_deref(), Some("self_"));
        assert_eq!(field_name("Self").as_deref(), Some("self_"));
        assert_eq!(field_name("--a--b--").as_deref(), Some("a_b"));
        assert_eq!(field_name("/"), None);
        assert_eq!(field_name("名前"), None);
        assert!(is_field_name("r2d2"));
        assert!(!is_field_name("2d"));
        assert!(!is_field_name("self"));
        assert!(!is_field_name("a-b"));
        assert!(is_type_name("Mnist"));
        assert!(!is_type_name("mnist"));
        assert!(!is_type_name("Self"));
        assert_eq!(type_name("image_net"), "ImageNet");
    }

    #[test]
    fn renames() {
        assert_eq!(rename("camelCase", "image_encoded"), "imageEncoded");
        assert_eq!(rename("kebab-case", "image_encoded"), "image-encoded");
        assert_eq!(rename("SCREAMING_SNAKE_CASE", "a_b"), "A_B");
        assert_eq!(rename("snake_case", "RedApple"), "red_apple");
        assert_eq!(rename("lowercase", "RedApple"), "redapple");
        assert_eq!(rename("PascalCase", "red_apple"), "RedApple");
    }
}
