//! The one vocabulary of attribute names, shared by the derive's parser, its did-you-mean
//! suggestions and the documentation.

/// Attributes on a struct or enum: `#[example(...)]`.
pub const CONTAINER: &[&str] = &[
    "rename_all",
    "dialect",
    "deny_unknown_keys",
    "crate",
    "repr",
];

/// Attributes on a field: `#[example(...)]`.
pub const FIELD: &[&str] = &[
    "key", "skip", "default", "shape", "flatten", "lossy", "sequence", "sparse",
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
    fn renames() {
        assert_eq!(rename("camelCase", "image_encoded"), "imageEncoded");
        assert_eq!(rename("kebab-case", "image_encoded"), "image-encoded");
        assert_eq!(rename("SCREAMING_SNAKE_CASE", "a_b"), "A_B");
        assert_eq!(rename("snake_case", "RedApple"), "red_apple");
        assert_eq!(rename("lowercase", "RedApple"), "redapple");
        assert_eq!(rename("PascalCase", "red_apple"), "RedApple");
    }
}
