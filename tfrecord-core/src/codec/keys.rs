//! The feature keys a derived type writes, as a table its derive builds, and the constant
//! checks that two members of one struct never write the same key. A flattened member's keys
//! are known only to its own type, not to the macro expanding the struct around it, so these
//! checks run as constant evaluation when the struct compiles: a key written twice would be
//! one map entry in the record, and one of the two values would be lost.

/// The feature keys of a derived type: its own features' keys, then each flattened member's
/// keys under that member's prefix.
#[derive(Debug)]
pub struct KeyTable {
    /// The keys of the type's own features (a sparse feature's index keys and value key).
    pub own: &'static [&'static str],
    /// Each flattened member: its key prefix (`member/`) and its type's table.
    pub flat: &'static [(&'static str, &'static KeyTable)],
}

/// How deep flattened members nest before [`flat_clash`] stops looking further down.
const DEPTH: usize = 16;

/// The length of the key made of the segments `q`, read in order.
const fn joined_len(q: &[&str]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < q.len() {
        n += q[i].len();
        i += 1;
    }
    n
}

/// Whether the key made of the segments `q` has `s` at byte `at`.
const fn has_at(q: &[&str], at: usize, s: &str) -> bool {
    let s = s.as_bytes();
    if joined_len(q) < at + s.len() {
        return false;
    }
    let (mut seg, mut pos) = (0, at);
    while seg < q.len() && pos >= q[seg].len() {
        pos -= q[seg].len();
        seg += 1;
    }
    let mut i = 0;
    while i < s.len() {
        while pos >= q[seg].len() {
            seg += 1;
            pos = 0;
        }
        if q[seg].as_bytes()[pos] != s[i] {
            return false;
        }
        pos += 1;
        i += 1;
    }
    true
}

/// Whether `table` writes the key made of the segments `q` from byte `at` on.
const fn writes(table: &KeyTable, q: &[&str], at: usize) -> bool {
    let rest = joined_len(q) - at;
    let mut i = 0;
    while i < table.own.len() {
        let key = table.own[i];
        if key.len() == rest && has_at(q, at, key) {
            return true;
        }
        i += 1;
    }
    let mut j = 0;
    while j < table.flat.len() {
        let (prefix, inner) = table.flat[j];
        if has_at(q, at, prefix) && writes(inner, q, at + prefix.len()) {
            return true;
        }
        j += 1;
    }
    false
}

/// Whether the key `key` is also written by a member flattened under `prefix` whose type has
/// the key table `table`.
#[must_use]
pub const fn key_clash(key: &str, prefix: &str, table: &KeyTable) -> bool {
    let q = [key];
    has_at(&q, 0, prefix) && writes(table, &q, prefix.len())
}

/// Whether a member flattened under `prefix_a` (key table `a`) and one flattened under
/// `prefix_b` (key table `b`) write a key in common.
#[must_use]
pub const fn flat_clash(prefix_a: &str, a: &KeyTable, prefix_b: &str, b: &KeyTable) -> bool {
    let mut path = [""; DEPTH + 1];
    path[0] = prefix_b;
    some_key_of(prefix_a, a, &mut path, 1, b)
}

/// Whether a key of `b`, under the prefixes `path[..depth]`, is written by `a` under
/// `prefix_a`.
const fn some_key_of<'k>(
    prefix_a: &str,
    a: &KeyTable,
    path: &mut [&'k str; DEPTH + 1],
    depth: usize,
    b: &'k KeyTable,
) -> bool {
    let mut i = 0;
    while i < b.own.len() {
        path[depth] = b.own[i];
        let (q, _) = path.split_at(depth + 1);
        if has_at(q, 0, prefix_a) && writes(a, q, prefix_a.len()) {
            return true;
        }
        i += 1;
    }
    let mut j = 0;
    while j < b.flat.len() && depth < DEPTH {
        let (prefix, inner) = b.flat[j];
        path[depth] = prefix;
        if some_key_of(prefix_a, a, path, depth + 1, inner) {
            return true;
        }
        j += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const INNER: KeyTable = KeyTable {
        own: &["a", "b/c"],
        flat: &[],
    };
    const DEEP: KeyTable = KeyTable {
        own: &["z"],
        flat: &[("in/", &INNER)],
    };

    #[test]
    fn an_own_key_under_a_flattened_prefix() {
        assert!(key_clash("inner/a", "inner/", &INNER));
        assert!(key_clash("x/b/c", "x/", &INNER));
        assert!(!key_clash("inner/b", "inner/", &INNER));
        assert!(!key_clash("inner/ab", "inner/", &INNER));
        assert!(!key_clash("inner/", "inner/", &INNER));
        assert!(key_clash("p/in/b/c", "p/", &DEEP));
        assert!(key_clash("p/z", "p/", &DEEP));
        assert!(!key_clash("p/in/z", "p/", &DEEP));
    }

    #[test]
    fn two_flattened_members() {
        // The same prefix and type, or prefixes that meet further down.
        assert!(flat_clash("p/", &INNER, "p/", &INNER));
        assert!(flat_clash(
            "x/",
            &INNER,
            "x/b/",
            &KeyTable {
                own: &["c"],
                flat: &[]
            }
        ));
        assert!(flat_clash("q/in/", &INNER, "q/", &DEEP));
        assert!(flat_clash("q/", &DEEP, "q/in/", &INNER));
        assert!(!flat_clash("p/", &INNER, "q/", &INNER));
        assert!(!flat_clash("p/", &INNER, "p/", &DEEP));
    }
}
