//! A byte scanner over one line of JSON text, for the reader that writes protobuf wire bytes
//! straight from it ([`to_wire`](super::to_wire)).
//!
//! Every method returns `None` for anything it does not take: a syntax error, but also valid
//! JSON outside the narrow forms read here (a string with an escape, a number with a fraction
//! where an integer is wanted). The caller then reads the line with the full reader instead,
//! which accepts the rest and words the error; so this scanner never has to be complete, only
//! never accept text the full reader refuses.

/// `None`: not read here (see the module documentation).
pub(super) type Fast<T> = Option<T>;

/// A position in the text.
pub(super) struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Scan {
            text: text.as_bytes(),
            at: 0,
        }
    }

    /// Skips JSON whitespace; the next byte, if any.
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.at) {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    #[inline]
    fn eat(&mut self, want: u8) -> Fast<()> {
        (self.peek()? == want).then(|| self.at += 1)
    }

    /// Whether only whitespace is left.
    pub(super) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// `{`; whether a member follows (`false`: the object was `{}`, and is read).
    #[inline]
    pub(super) fn begin_object(&mut self) -> Fast<bool> {
        self.eat(b'{')?;
        Some(self.eat(b'}').is_none())
    }

    /// After a member's value: `,` (`true`: another member follows) or `}` (`false`).
    #[inline]
    pub(super) fn next_member(&mut self) -> Fast<bool> {
        self.after_item(b'}')
    }

    /// `[`; whether an element follows (`false`: the array was `[]`, and is read).
    #[inline]
    pub(super) fn begin_array(&mut self) -> Fast<bool> {
        self.eat(b'[')?;
        Some(self.eat(b']').is_none())
    }

    /// After an element: `,` (`true`: another element follows) or `]` (`false`).
    #[inline]
    pub(super) fn next_element(&mut self) -> Fast<bool> {
        self.after_item(b']')
    }

    #[inline]
    fn after_item(&mut self, close: u8) -> Fast<bool> {
        let b = self.peek()?;
        self.at += 1;
        if b == b',' {
            Some(true)
        } else {
            (b == close).then_some(false)
        }
    }

    /// A member's key and the `:` after it.
    #[inline]
    pub(super) fn key(&mut self) -> Fast<&'a [u8]> {
        let k = self.string()?;
        self.eat(b':')?;
        Some(k)
    }

    /// The range of a member's key in the text, and the `:` after it.
    #[inline]
    pub(super) fn key_range(&mut self) -> Fast<(usize, usize)> {
        let k = self.string()?;
        let start = self.at - 1 - k.len();
        self.eat(b':')?;
        Some((start, start + k.len()))
    }

    /// The text of `start..end`.
    pub(super) fn slice(&self, start: usize, end: usize) -> &'a [u8] {
        &self.text[start..end]
    }

    /// A string without escapes: its bytes between the quotes.
    #[inline]
    pub(super) fn string(&mut self) -> Fast<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        let rest = &self.text[start..];
        // A quote ends it; a backslash or a control character (which JSON refuses in a
        // string) is left to the full reader.
        let n = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[n] != b'"' {
            return None;
        }
        self.at = start + n + 1;
        Some(&rest[..n])
    }

    /// Whether the next value is `null`, which is then read.
    #[inline]
    pub(super) fn null(&mut self) -> bool {
        if self.peek() == Some(b'n') && self.text[self.at..].starts_with(b"null") {
            self.at += 4;
            true
        } else {
            false
        }
    }

    /// Whether the next value is a string (it is not read).
    #[inline]
    pub(super) fn at_string(&mut self) -> bool {
        self.peek() == Some(b'"')
    }

    /// A JSON number: its text, in JSON's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    pub(super) fn number(&mut self) -> Fast<&'a [u8]> {
        self.peek()?;
        let t = self.text;
        let start = self.at;
        let mut i = start;
        let digits = |i: &mut usize| {
            let from = *i;
            while t.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *i > from
        };
        if t.get(i) == Some(&b'-') {
            i += 1;
        }
        if t.get(i) == Some(&b'0') {
            i += 1;
            if t.get(i).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        } else if !digits(&mut i) {
            return None;
        }
        if t.get(i) == Some(&b'.') {
            i += 1;
            if !digits(&mut i) {
                return None;
            }
        }
        if matches!(t.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(t.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !digits(&mut i) {
                return None;
            }
        }
        self.at = i;
        Some(&t[start..i])
    }
}

/// `-?[0-9]+` as an integer in `min..=max`; anything else (a fraction, an exponent, a sign
/// `+`, a value out of range) is left to the full reader.
#[inline]
pub(super) fn integer(text: &[u8], min: i64, max: i64) -> Fast<i64> {
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        // 19 digits fit in a u64.
        v = v * 10 + u64::from(d - b'0');
    }
    let v = if neg {
        0i64.checked_sub_unsigned(v)?
    } else {
        i64::try_from(v).ok()?
    };
    (min..=max).contains(&v).then_some(v)
}
