//! Feature vocabularies: which value lists a container's `Feature` message has, and their
//! numbers in its oneof (TensorFlow's three, OneFlow's five).

use crate::feature::ListKind;

/// A feature vocabulary: which list kinds exist and their numbers in the `Feature` oneof.
pub trait Dialect: 'static {
    /// `tf.train.Example` or `OFRecord`, for messages.
    const NAME: &'static str;
    /// The oneof field number of a list kind, `None` when the dialect lacks the kind.
    fn tag(kind: ListKind) -> Option<u32>;
    /// The list kind of a oneof field number.
    fn kind(tag: u32) -> Option<ListKind>;
}

/// TensorFlow's `tensorflow.Feature`: bytes (1), float (2), int64 (3).
#[derive(Debug)]
pub enum Tf {}

impl Dialect for Tf {
    const NAME: &'static str = "tf.train.Example";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        match kind {
            ListKind::Bytes => Some(1),
            ListKind::Float => Some(2),
            ListKind::Int64 => Some(3),
            ListKind::Double | ListKind::Int32 => None,
        }
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        match tag {
            1 => Some(ListKind::Bytes),
            2 => Some(ListKind::Float),
            3 => Some(ListKind::Int64),
            _ => None,
        }
    }
}

/// `tf.train.Example` for fields that opted in to lossy narrowing with `#[example(lossy)]`:
/// the same feature kinds as [`Tf`], plus `f64` stored as a float.
#[derive(Debug)]
pub enum TfLossy {}

impl Dialect for TfLossy {
    const NAME: &'static str = "tf.train.Example";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        Tf::tag(kind)
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        Tf::kind(tag)
    }
}

/// OneFlow's `oneflow.Feature`: bytes (1), float (2), double (3), int32 (4), int64 (5).
#[derive(Debug)]
pub enum Of {}

impl Dialect for Of {
    const NAME: &'static str = "OFRecord";
    #[inline]
    fn tag(kind: ListKind) -> Option<u32> {
        Some(match kind {
            ListKind::Bytes => 1,
            ListKind::Float => 2,
            ListKind::Double => 3,
            ListKind::Int32 => 4,
            ListKind::Int64 => 5,
        })
    }
    #[inline]
    fn kind(tag: u32) -> Option<ListKind> {
        match tag {
            1 => Some(ListKind::Bytes),
            2 => Some(ListKind::Float),
            3 => Some(ListKind::Double),
            4 => Some(ListKind::Int32),
            5 => Some(ListKind::Int64),
            _ => None,
        }
    }
}
