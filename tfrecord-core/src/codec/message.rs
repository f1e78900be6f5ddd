//! A feature's serialized message as the decoders find it: one slice, or several that
//! protobuf merges by concatenation.

use crate::error::Error;

/// The serialized value of one map entry: a `Feature` (or `FeatureList`) message, possibly
/// split over several slices that protobuf merges by concatenation.
#[derive(Clone, Debug, Default)]
pub struct FeatureBytes<'de> {
    pub(super) first: &'de [u8],
    /// The rare further slices, behind one thin pointer so that a `FeatureBytes` is three words.
    #[allow(clippy::box_collection)] // the box is the point: one word instead of three
    more: Option<Box<Vec<&'de [u8]>>>,
}

impl<'de> FeatureBytes<'de> {
    /// A message in one slice.
    pub fn new(bytes: &'de [u8]) -> Self {
        FeatureBytes {
            first: bytes,
            more: None,
        }
    }

    pub(super) fn push(&mut self, bytes: &'de [u8]) {
        self.more.get_or_insert_with(Box::default).push(bytes);
    }

    /// The slices, in order.
    pub fn slices(&self) -> impl Iterator<Item = &'de [u8]> + '_ {
        std::iter::once(self.first).chain(self.more.iter().flat_map(|m| m.iter().copied()))
    }

    /// The message when it is in one slice (the common case).
    #[inline]
    pub fn single(&self) -> Option<&'de [u8]> {
        if self.more.is_none() {
            Some(self.first)
        } else {
            None
        }
    }

    /// Whether the message is empty: a `Feature` with no list set.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
            && self
                .more
                .as_ref()
                .is_none_or(|m| m.iter().all(|s| s.is_empty()))
    }

    /// Slice `i`, if there is one.
    pub fn slice(&self, i: usize) -> Option<&'de [u8]> {
        if i == 0 {
            Some(self.first)
        } else {
            self.more.as_ref()?.get(i - 1).copied()
        }
    }
}

#[cold]
pub(crate) fn malformed(message: &'static str, e: &Error) -> Error {
    Error::decode(
        message,
        e.to_string()
            .trim_start_matches("invalid protobuf message: "),
    )
}
