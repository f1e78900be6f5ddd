//! Key expressions: the path syntax into an Avro value of tensorflow-io's Avro dataset
//! (`tfio.experimental.columnar.parse_avro`).
//!
//! | part | meaning | dimension |
//! | --- | --- | --- |
//! | `name` | a record field | no |
//! | `[*]` | every element of an array (of a map: its values, in key order) | yes |
//! | `[2]` | element 2 of an array (from 0) | no |
//! | `['nickname']` | the value of a map key (a quote in it written twice: `['it''s']`; `['']` the empty key) | no |
//! | `[gender='unknown']`, `[name.first=name.second]`, `[name.first=@name.first]` | the array (or map) elements for which both sides are equal (as strings); each side is a `'constant'`, a path relative to the element, or a root path starting with `@` | yes |
//! | `:int` (`boolean`, `int`, `long`, `float`, `double`, `bytes`, `string`, `record`, `enum`, `fixed`, `array`, `map`) | the value if the union's active branch has this type, else a missing value | no |
//!
//! Parts are separated by `.` (optional before `[` and `:`): `friends[*].address[*].street`,
//! `jobs[*][*].name.first`, `cars['nickname'].color`, `multi:int`. A leading `@` makes a path
//! start at the record's root; it matters inside filters and in `SparseFeature` index and value
//! keys, which are otherwise relative to the feature's array elements.

use std::fmt;

use crate::error::{Error, Result};

/// A parsed key expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyExpr {
    /// The path starts at the record's root (`@`).
    pub root: bool,
    /// The parts, in order.
    pub steps: Vec<Step>,
    text: String,
}

/// One part of a key expression.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// `name`: a record field.
    Field(String),
    /// `[N]`: one array element.
    Index(usize),
    /// `[*]`: every array element (adds a dimension).
    All,
    /// `[lhs=rhs]`: the array elements for which both sides are equal (adds a dimension).
    Filter(Box<Filter>),
    /// `['key']`: the value of one map key.
    MapKey(String),
    /// `:type`: the value of a union when its active branch has this type.
    Branch(Branch),
}

/// A filter `[lhs=rhs]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The left side.
    pub lhs: Operand,
    /// The right side.
    pub rhs: Operand,
}

/// One side of a filter.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operand {
    /// `'text'`: a string constant.
    Const(String),
    /// A path relative to the array element, or from the root with `@`; it must name one value
    /// (no `[*]` or filter).
    Path(KeyExpr),
}

/// The type named by a union branch selection `:type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Branch {
    /// `:boolean`.
    Boolean,
    /// `:int`.
    Int,
    /// `:long`.
    Long,
    /// `:float`.
    Float,
    /// `:double`.
    Double,
    /// `:bytes`.
    Bytes,
    /// `:string`.
    String,
    /// `:record`.
    Record,
    /// `:enum`.
    Enum,
    /// `:fixed`.
    Fixed,
    /// `:array`.
    Array,
    /// `:map`.
    Map,
}

impl Branch {
    const ALL: [(&'static str, Branch); 12] = [
        ("boolean", Branch::Boolean),
        ("int", Branch::Int),
        ("long", Branch::Long),
        ("float", Branch::Float),
        ("double", Branch::Double),
        ("bytes", Branch::Bytes),
        ("string", Branch::String),
        ("record", Branch::Record),
        ("enum", Branch::Enum),
        ("fixed", Branch::Fixed),
        ("array", Branch::Array),
        ("map", Branch::Map),
    ];

    /// The Avro type name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, b)| *b == self)
            .map_or("?", |(n, _)| n)
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, b)| *b)
    }
}

impl KeyExpr {
    /// Parses a key expression.
    ///
    /// # Errors
    /// A syntax error, naming the position and what was expected.
    ///
    /// ```
    /// use tfrecord_import::avro::{KeyExpr, Step};
    ///
    /// let e = KeyExpr::parse("friends[*].address[*].street")?;
    /// assert_eq!(e.dims(), 2);
    /// assert_eq!(e.steps[1], Step::All);
    /// assert!(KeyExpr::parse("friends[").is_err());
    /// # Ok::<(), tfrecord_import::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<KeyExpr> {
        let chars: Vec<char> = text.chars().collect();
        let mut p = Parser {
            text,
            chars: &chars,
            pos: 0,
        };
        let e = p.path(false)?;
        if p.pos < chars.len() {
            return Err(p.error("unexpected character"));
        }
        Ok(e)
    }

    /// The number of dimensions the expression adds: one per `[*]` and per filter.
    pub fn dims(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::All | Step::Filter(_)))
            .count()
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for KeyExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The state of parsing one key expression.
struct Parser<'a> {
    /// The whole expression, for messages.
    text: &'a str,
    /// Its characters.
    chars: &'a [char],
    /// The position of the next character in `chars`.
    pos: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    /// A syntax error at the current position.
    fn error(&self, what: &str) -> Error {
        let found = self
            .peek()
            .map_or_else(|| "the end".to_string(), |c| format!("`{c}`"));
        Error::new(format!(
            "invalid key expression `{}`: {what} at position {} (found {found})",
            self.text, self.pos
        ))
    }

    /// The identifier at the current position (possibly empty).
    fn ident(&mut self) -> String {
        let start = self.pos;
        while self.peek().is_some_and(is_ident) {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// A path up to the end, or (inside a filter) up to `=` or `]` at bracket depth 0.
    fn path(&mut self, in_filter: bool) -> Result<KeyExpr> {
        let start = self.pos;
        let root = self.peek() == Some('@');
        if root {
            self.pos += 1;
        }
        let mut steps = Vec::new();
        loop {
            match self.peek() {
                Some(c) if is_ident_start(c) => {
                    if !steps.is_empty() {
                        return Err(self.error("expected `.`, `[` or `:` between parts"));
                    }
                    steps.push(Step::Field(self.ident()));
                }
                Some('[') => steps.push(self.bracket()?),
                Some(':') => {
                    self.pos += 1;
                    let name = self.ident();
                    match Branch::parse(&name) {
                        Some(b) => steps.push(Step::Branch(b)),
                        None => {
                            return Err(Error::new(format!(
                                "invalid key expression `{}`: unknown union branch type `:{name}` \
                                 (expected one of: {})",
                                self.text,
                                Branch::ALL
                                    .iter()
                                    .map(|(n, _)| *n)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )));
                        }
                    }
                }
                _ => return Err(self.error("expected a field name, `[` or `:`")),
            }
            // What may follow a part.
            loop {
                match self.peek() {
                    Some('.') => {
                        self.pos += 1;
                        match self.peek() {
                            Some(c) if is_ident_start(c) => {
                                steps.push(Step::Field(self.ident()));
                            }
                            Some('[') => {}
                            _ => return Err(self.error("expected a field name after `.`")),
                        }
                    }
                    Some('[' | ':') => break,
                    None => break,
                    Some('=' | ']') if in_filter => break,
                    Some(_) => return Err(self.error("expected `.`, `[`, `:` or the end")),
                }
            }
            match self.peek() {
                Some('[' | ':') => {}
                _ => break,
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        Ok(KeyExpr { root, steps, text })
    }

    /// `[...]` at `self.pos`.
    fn bracket(&mut self) -> Result<Step> {
        let open = self.pos;
        self.pos += 1;
        // Find the matching `]`, skipping quoted text and nested brackets.
        let mut depth = 0usize;
        let mut quoted = false;
        let mut eq = None;
        let mut end = None;
        for (i, &c) in self.chars.iter().enumerate().skip(self.pos) {
            match c {
                '\'' => quoted = !quoted,
                '[' if !quoted => depth += 1,
                ']' if !quoted && depth == 0 => {
                    end = Some(i);
                    break;
                }
                ']' if !quoted => depth -= 1,
                '=' if !quoted && depth == 0 && eq.is_none() => eq = Some(i),
                _ => {}
            }
        }
        let Some(end) = end else {
            self.pos = open;
            return Err(self.error(if quoted {
                "`[` without a matching `]` (a quote opened is never closed: a quote inside a \
                 quoted key is written twice, `['it''s']`)"
            } else {
                "`[` without a matching `]`"
            }));
        };
        let inner: String = self.chars[self.pos..end].iter().collect();
        let step = if inner == "*" {
            Step::All
        } else if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_digit()) {
            match inner.parse::<usize>() {
                Ok(n) => Step::Index(n),
                Err(_) => return Err(self.error("array index too large")),
            }
        } else if let Some(eq) = eq {
            let lhs = self.operand(self.pos, eq)?;
            let rhs = self.operand(eq + 1, end)?;
            Step::Filter(Box::new(Filter { lhs, rhs }))
        } else if let Some(key) = unquote(&inner) {
            Step::MapKey(key)
        } else {
            return Err(Error::new(format!(
                "invalid key expression `{}`: `[{inner}]` is not `[*]`, an index `[N]`, a map key \
                 `['key']` or a filter `[lhs=rhs]`",
                self.text
            )));
        };
        self.pos = end + 1;
        Ok(step)
    }

    /// One side of a filter: the characters `from..to`.
    fn operand(&mut self, from: usize, to: usize) -> Result<Operand> {
        let raw: String = self.chars[from..to].iter().collect();
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(Error::new(format!(
                "invalid key expression `{}`: a filter side is empty",
                self.text
            )));
        }
        if let Some(text) = unquote(trimmed) {
            return Ok(Operand::Const(text));
        }
        let lead = raw.len() - raw.trim_start().len();
        let mut sub = Parser {
            text: self.text,
            chars: self.chars,
            pos: from + raw[..lead].chars().count(),
        };
        let path = sub.path(true)?;
        while sub.pos < to && sub.chars.get(sub.pos).is_some_and(|c| c.is_whitespace()) {
            sub.pos += 1;
        }
        if sub.pos != to {
            return Err(sub.error("unexpected character in a filter"));
        }
        if path.steps.is_empty() {
            return Err(sub.error("a filter side is empty"));
        }
        if path.dims() > 0 {
            return Err(Error::new(format!(
                "invalid key expression `{}`: the filter side `{}` must name one value; `[*]` and \
                 filters are not allowed inside a filter",
                self.text, path.text
            )));
        }
        Ok(Operand::Path(path))
    }
}

/// The text of a quoted string: `'...'`, a quote inside written twice (`'it''s'` is `it's`,
/// `''` the empty string); `None` for anything else.
fn unquote(text: &str) -> Option<String> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\'' && chars.next() != Some('\'') {
            return None;
        }
        out.push(c);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(s: &str) -> Vec<Step> {
        KeyExpr::parse(s).unwrap().steps
    }

    fn field(s: &str) -> Step {
        Step::Field(s.into())
    }

    #[test]
    fn parses_every_kind_of_part() {
        assert_eq!(steps("name.first"), [field("name"), field("first")]);
        assert_eq!(
            steps("friends[2].name.first"),
            [
                field("friends"),
                Step::Index(2),
                field("name"),
                field("first")
            ]
        );
        assert_eq!(
            steps("jobs[*][*].name"),
            [field("jobs"), Step::All, Step::All, field("name")]
        );
        assert_eq!(
            steps("cars['nickname'].color"),
            [
                field("cars"),
                Step::MapKey("nickname".into()),
                field("color")
            ]
        );
        assert_eq!(
            steps("multi:int"),
            [field("multi"), Step::Branch(Branch::Int)]
        );
        // A quote inside a key is written twice; `''` is the empty key.
        assert_eq!(
            steps("m['it''s'][''][' a]b ']"),
            [
                field("m"),
                Step::MapKey("it's".into()),
                Step::MapKey(String::new()),
                Step::MapKey(" a]b ".into())
            ]
        );
        let e = KeyExpr::parse("m['it's']").unwrap_err().to_string();
        assert!(e.contains("written twice"), "{e}");
        let f = steps("f[n='O''Hara']");
        let Step::Filter(filter) = &f[1] else {
            panic!("{f:?}")
        };
        assert_eq!(filter.rhs, Operand::Const("O'Hara".into()));
        let f = steps("friends[gender='unknown'].name.first");
        let Step::Filter(filter) = &f[1] else {
            panic!("{f:?}")
        };
        assert_eq!(filter.rhs, Operand::Const("unknown".into()));
        let Operand::Path(lhs) = &filter.lhs else {
            panic!()
        };
        assert_eq!(lhs.steps, [field("gender")]);
        let f = steps("friends[name.first=@name.first].name.initial");
        let Step::Filter(filter) = &f[1] else {
            panic!()
        };
        let Operand::Path(rhs) = &filter.rhs else {
            panic!()
        };
        assert!(rhs.root);
        assert_eq!(rhs.steps, [field("name"), field("first")]);
        let f = steps("friends['male'=gender]");
        assert!(matches!(&f[1], Step::Filter(_)));
        let e = KeyExpr::parse("@cars['a.b'].engine.id").unwrap();
        assert!(e.root);
        assert_eq!(e.dims(), 0);
        assert_eq!(KeyExpr::parse("a[x=y][*].b").unwrap().dims(), 2);
    }

    #[test]
    fn rejects_bad_syntax_with_a_message() {
        for (bad, what) in [
            ("", "expected a field name"),
            ("a.", "after `.`"),
            ("a..b", "after `.`"),
            ("a[", "matching `]`"),
            ("a[x]", "is not `[*]`"),
            ("a:foo", "unknown union branch"),
            ("a[*]b", "expected `.`"),
            ("a[b[*]=c]", "must name one value"),
            ("a b", "expected `.`"),
            ("a[99999999999999999999999]", "too large"),
            ("a[=x]", "filter side is empty"),
        ] {
            let e = KeyExpr::parse(bad).unwrap_err().to_string();
            assert!(e.contains(what), "{bad}: {e}");
        }
    }

    #[test]
    fn never_panics_on_short_strings() {
        let alphabet: Vec<char> = "a[]*.=':@0 é".chars().collect();
        let n = alphabet.len();
        let mut ok = 0;
        for len in 0..=5u32 {
            for mut code in 0..n.pow(len) {
                let mut s = String::new();
                for _ in 0..len {
                    s.push(alphabet[code % n]);
                    code /= n;
                }
                if KeyExpr::parse(&s).is_ok() {
                    ok += 1;
                }
            }
        }
        assert!(ok > 0);
    }
}
