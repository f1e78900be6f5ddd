//! Strings read as protobuf's Python `json_format.Parse` reads them: base64 through Python's
//! `base64`, numbers through Python's `int` and `float`, so that `from-json` takes and refuses
//! the same text.

/// Base64 as `json_format.Parse` decodes it: padding appended (`4 - len % 4` of `=`), then
/// Python's `base64.urlsafe_b64decode`, which reads both alphabets' last two characters,
/// passes over characters outside the alphabet (whitespace, line breaks), and stops at the
/// padding that completes a group; `None` where it fails ("Incorrect padding").
pub(super) fn base64(s: &str) -> Option<Vec<u8>> {
    let pad = 4 - s.len() % 4;
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 3);
    let (mut quad, mut pads, mut left) = (0u8, 0usize, 0u8);
    for c in s.bytes().chain(std::iter::repeat_n(b'=', pad)) {
        if c == b'=' {
            if quad >= 2 {
                pads += 1;
                if usize::from(quad) + pads >= 4 {
                    return Some(out);
                }
            }
            continue;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => continue,
        };
        pads = 0;
        match quad {
            0 => left = v,
            1 => {
                out.push(left << 2 | v >> 4);
                left = v & 0x0f;
            }
            2 => {
                out.push(left << 4 | v >> 2);
                left = v & 0x03;
            }
            _ => out.push(left << 6 | v),
        }
        quad = (quad + 1) % 4;
    }
    (quad == 0).then_some(out)
}

/// An integer from a string as json_format reads it (refusing one holding a space): Python's
/// `int` (surrounding whitespace, a sign, digits with single underscores between them), else
/// Python's `float` when its value is integral (`"1e3"`, `"5.0"`).
pub(super) fn int(s: &str) -> Option<i128> {
    if s.contains(' ') {
        return None;
    }
    let int = digits(s.trim()).and_then(|d| d.parse::<i128>().ok());
    #[allow(clippy::cast_possible_truncation)] // integral, and beyond int64 either way
    int.or_else(|| {
        float(s)
            .filter(|f| f.is_finite() && f.fract() == 0.0)
            .map(|f| f as i128)
    })
}

/// `s` without the underscores Python allows between digits (`1_000`); `None` for one
/// elsewhere.
fn digits(s: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !s.contains('_') {
        return Some(std::borrow::Cow::Borrowed(s));
    }
    let b = s.as_bytes();
    let between = |i: usize| {
        i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    (0..b.len())
        .filter(|&i| b[i] == b'_')
        .all(between)
        .then(|| std::borrow::Cow::Owned(s.replace('_', "")))
}

/// A float as Python's `float` reads a string: surrounding whitespace, underscores between
/// digits, `inf`, `infinity` and `nan` in any case and with a sign (json_format refuses a bare
/// lowercase `nan`).
pub(super) fn float(s: &str) -> Option<f64> {
    if s == "nan" {
        return None;
    }
    let t = digits(s.trim())?;
    let unsigned = t.trim_start_matches(['+', '-']).to_ascii_lowercase();
    match unsigned.as_str() {
        "inf" | "infinity" | "nan" => {}
        // Rust also reads `infinite`-like spellings Python does not: only digits from here.
        u if u.bytes().any(|b| b.is_ascii_alphabetic() && b != b'e') => return None,
        _ => {}
    }
    t.parse::<f64>().ok()
}
