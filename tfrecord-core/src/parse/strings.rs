//! The elements of `tf.string` tensors: many byte strings in one buffer.

use std::fmt;
use std::iter::FusedIterator;

/// A list of byte strings (the elements of a `tf.string` tensor) in one buffer: the bytes of
/// every string one after the other, and where each string ends. A parsed batch thus holds all
/// the strings of a tensor in two allocations instead of one per string.
///
/// It reads like a `Vec<Vec<u8>>` ([`get`](Self::get), [`iter`](Self::iter),
/// [`push`](Self::push), [`len`](Self::len)), converts from one (`From<Vec<Vec<u8>>>`,
/// [`FromIterator`]) and back ([`to_vecs`](Self::to_vecs)), and shows its two buffers
/// ([`data`](Self::data), [`ends`](Self::ends)) to consumers that take them as they are (the
/// layout of an Arrow binary array, without its leading zero offset).
///
/// ```
/// use tfrecord_core::parse::ByteStrings;
///
/// let mut s: ByteStrings = ["ab", "", "c"].into_iter().collect();
/// s.push("de");
/// assert_eq!(s.len(), 4);
/// assert_eq!(s.get(0), Some(&b"ab"[..]));
/// assert_eq!(s.get(1), Some(&b""[..]));
/// assert_eq!(s.data(), b"abcde");
/// assert_eq!(s.ends(), [2, 2, 3, 5]);
/// assert_eq!(s.iter().last(), Some(&b"de"[..]));
/// assert_eq!(s.to_vecs()[2], b"c".to_vec());
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ByteStrings {
    /// Every string's bytes, in order.
    data: Vec<u8>,
    /// Where each string ends in `data`: non-decreasing, the last one is `data.len()`.
    ends: Vec<usize>,
}

impl ByteStrings {
    /// No strings.
    pub fn new() -> Self {
        ByteStrings::default()
    }

    /// No strings, with room for `strings` strings of `bytes` bytes in all.
    pub fn with_capacity(strings: usize, bytes: usize) -> Self {
        ByteStrings {
            data: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(strings),
        }
    }

    /// The number of strings.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no strings.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Where string `i` starts in [`data`](Self::data).
    #[inline]
    fn start(&self, i: usize) -> usize {
        match i.checked_sub(1) {
            Some(p) => self.ends.get(p).copied().unwrap_or(0),
            None => 0,
        }
    }

    /// String `i`, `None` when out of range.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        self.data.get(self.start(i)..end)
    }

    /// The strings, in order.
    pub fn iter(&self) -> ByteStringsIter<'_> {
        ByteStringsIter {
            strings: self,
            front: 0,
            back: self.len(),
        }
    }

    /// Appends a string.
    #[inline]
    pub fn push(&mut self, s: impl AsRef<[u8]>) {
        self.data.extend_from_slice(s.as_ref());
        self.ends.push(self.data.len());
    }

    /// Reserves room for `strings` more strings of `bytes` bytes in all.
    pub fn reserve(&mut self, strings: usize, bytes: usize) {
        self.data.reserve(bytes);
        self.ends.reserve(strings);
    }

    /// Keeps the first `n` strings.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len() {
            self.ends.truncate(n);
            self.data.truncate(self.ends.last().copied().unwrap_or(0));
        }
    }

    /// Removes every string, keeping the buffers' capacity.
    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    /// How many strings it has room for without growing.
    pub(crate) fn capacity(&self) -> usize {
        self.ends.capacity()
    }

    /// How many bytes of strings it has room for without growing.
    pub(crate) fn data_capacity(&self) -> usize {
        self.data.capacity()
    }

    /// The bytes of every string, one after the other.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Where each string ends in [`data`](Self::data) (string `i` is
    /// `data[ends[i - 1]..ends[i]]`, the first starts at 0).
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    /// The strings as one `Vec<u8>` each.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        self.iter().map(<[u8]>::to_vec).collect()
    }

    /// Appends strings `a..b` of `src` (as many of them as there are).
    pub(crate) fn extend_range(&mut self, src: &ByteStrings, a: usize, b: usize) {
        let b = b.min(src.len());
        if a >= b {
            return;
        }
        let (start, end) = (src.start(a), src.start(b));
        let base = self.data.len();
        self.data
            .extend_from_slice(src.data.get(start..end).unwrap_or_default());
        if let Some(ends) = src.ends.get(a..b) {
            self.ends
                .extend(ends.iter().map(|&e| e.saturating_sub(start) + base));
        }
    }

    /// Reserves room for `n` more strings of `bytes` bytes in all, failing instead of aborting
    /// when that is impossible.
    pub(crate) fn try_reserve(
        &mut self,
        n: usize,
        bytes: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.data.try_reserve(bytes)?;
        self.ends.try_reserve(n)
    }
}

impl fmt::Debug for ByteStrings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<S: AsRef<[u8]>> Extend<S> for ByteStrings {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for s in iter {
            self.push(s);
        }
    }
}

impl<S: AsRef<[u8]>> FromIterator<S> for ByteStrings {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut out = ByteStrings::new();
        out.extend(iter);
        out
    }
}

impl From<Vec<Vec<u8>>> for ByteStrings {
    fn from(v: Vec<Vec<u8>>) -> Self {
        let bytes = v.iter().map(Vec::len).sum();
        let mut out = ByteStrings::with_capacity(v.len(), bytes);
        out.extend(v);
        out
    }
}

impl<'a> IntoIterator for &'a ByteStrings {
    type Item = &'a [u8];
    type IntoIter = ByteStringsIter<'a>;
    fn into_iter(self) -> ByteStringsIter<'a> {
        self.iter()
    }
}

/// The strings of a [`ByteStrings`], in order.
#[derive(Clone, Debug)]
pub struct ByteStringsIter<'a> {
    strings: &'a ByteStrings,
    front: usize,
    back: usize,
}

impl<'a> Iterator for ByteStringsIter<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.front >= self.back {
            return None;
        }
        let s = self.strings.get(self.front);
        self.front += 1;
        s
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back.saturating_sub(self.front);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for ByteStringsIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.strings.get(self.back)
    }
}

impl ExactSizeIterator for ByteStringsIter<'_> {}

impl FusedIterator for ByteStringsIter<'_> {}
