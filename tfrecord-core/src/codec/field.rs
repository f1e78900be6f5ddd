//! Whole features: a field's value list, its shape, and its presence.

use super::dialect::{Dialect, Of, Tf, TfLossy};
use super::elem::{DecodeElem, EncodeElem};
use super::message::FeatureBytes;
use super::view::{
    FeatureView, canonical_feature, collect_canonical_within, extend_canonical_within,
    one_canonical, same_kind,
};
use super::wire::{self, len_field_len, put_len_prefix, put_tag, put_varint};
use crate::error::Error;
use crate::feature::{FeatureProblem, ListKind};

/// Decodes a present feature of `T`, taking [`DecodeField::decode_canonical`] when the feature is in
/// the canonical layout and building a [`FeatureView`] otherwise.
///
/// # Errors
/// As [`DecodeField::decode`].
#[inline(always)]
pub(crate) fn decode_feature<'de, D: Dialect, T: DecodeField<'de, D>>(
    msg: FeatureBytes<'de>,
) -> Result<T, FeatureProblem> {
    if let Some(bytes) = msg.single()
        && let Some((tag, value)) = canonical_feature(bytes)
        && let Some(found) = D::kind(tag)
        && let Some(r) = T::decode_canonical(found, value)
    {
        return r;
    }
    T::decode(&FeatureView::new::<D>(msg)?)
}

/// Decodes a present feature of `T` into `out` for the `decode_into` of one-value fields: a
/// bytes value in the canonical layout is converted in place ([`DecodeElem::assign_raw`]),
/// reusing a `String`'s or a `Vec<u8>`'s buffer; anything else is decoded anew.
///
/// # Errors
/// As [`DecodeField::decode`].
#[doc(hidden)]
#[inline]
pub fn decode_one_into<'de, D: Dialect, T: DecodeField<'de, D> + DecodeElem<'de, D>>(
    out: &mut T,
    msg: FeatureBytes<'de>,
) -> Result<(), FeatureProblem> {
    if <T as DecodeElem<'de, D>>::KIND == ListKind::Bytes
        && let Some(bytes) = msg.single()
        && let Some((tag, value)) = canonical_feature(bytes)
        && D::kind(tag) == Some(ListKind::Bytes)
    {
        return out.assign_raw(super::elem::RawValue::Bytes(value));
    }
    *out = decode_feature::<D, T>(msg)?;
    Ok(())
}

/// The length of a list message body holding `elems`.
#[inline]
pub fn list_body_len<D: Dialect, E: EncodeElem<D>>(elems: &[E]) -> usize {
    if E::KIND.is_packed() {
        if elems.is_empty() {
            return 0;
        }
        let payload: usize = elems.iter().map(EncodeElem::wire_len).sum();
        len_field_len(payload)
    } else {
        elems.iter().map(|e| len_field_len(e.wire_len())).sum()
    }
}

/// Appends a list message body holding `elems`.
#[inline]
pub fn put_list_body<D: Dialect, E: EncodeElem<D>>(elems: &[E], buf: &mut Vec<u8>) {
    if E::KIND.is_packed() {
        if elems.is_empty() {
            return;
        }
        let payload: usize = elems.iter().map(EncodeElem::wire_len).sum();
        put_len_prefix(buf, 1, payload);
        for e in elems {
            e.put(buf);
        }
    } else {
        for e in elems {
            put_tag(buf, 1, wire::LEN);
            put_varint(buf, e.wire_len() as u64);
            e.put(buf);
        }
    }
}

/// A field type that encodes as one feature of dialect `D`: a value, a list, an array, an
/// option.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a supported feature field type",
    label = "unsupported field type",
    note = "supported field types: a value (i64, i32, i16, i8, u8, u64, u32, u16, bool, f32, String, \
            Vec<u8>, bytes::Bytes, &[u8], &str, Cow<[u8]>, Cow<str>, a unit-only enum deriving \
            `Example`), `Vec<_>` or `[_; N]` of a value (but not of u8: `Vec<u8>` is bytes), and \
            `Option<_>` of those; f64 in OFRecord, or in tf.train.Example with `#[example(lossy)]`"
)]
pub trait EncodeField<D: Dialect> {
    /// The list kind.
    const KIND: ListKind;
    /// `false` when the feature is to be left out (`None`).
    #[inline]
    fn present(&self) -> bool {
        true
    }
    /// The length of the list message body.
    fn body_len(&self) -> usize;
    /// Appends the list message body.
    fn put_body(&self, buf: &mut Vec<u8>);
}

/// A field type that decodes from one feature of dialect `D`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a supported feature field type",
    label = "unsupported field type",
    note = "supported field types: a value (i64, i32, i16, i8, u8, u64, u32, u16, bool, f32, String, \
            Vec<u8>, bytes::Bytes, &[u8], &str, Cow<[u8]>, Cow<str>, a unit-only enum deriving \
            `Example`), `Vec<_>` or `[_; N]` of a value (but not of u8: `Vec<u8>` is bytes), and \
            `Option<_>` of those; f64 in OFRecord, or in tf.train.Example with `#[example(lossy)]`"
)]
pub trait DecodeField<'de, D: Dialect>: Sized {
    /// The list kind.
    const KIND: ListKind;
    /// Decodes a present feature.
    ///
    /// # Errors
    /// Wrong kind, wrong count, values out of range.
    fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem>;
    /// Decodes a present feature in the layout every writer produces, without building a
    /// [`FeatureView`]: one list of kind `found` whose body is the one `value` field `value` (a
    /// packed run of numbers, or one bytes value). `None` hands the feature to
    /// [`decode`](Self::decode), which must then give the same result.
    #[inline]
    fn decode_canonical(found: ListKind, value: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
        let _ = (found, value);
        None
    }
    /// [`decode_canonical`](Self::decode_canonical) of the value `within[..len]`, where the
    /// bytes of `within` past `len` (the rest of the enclosing message) may be looked at but
    /// are not part of the value: packed integers are then read a word at a time to the
    /// value's last byte (see [`DecodeElem::extend_packed_within`]). A feature list's step
    /// loop calls it with the rest of the list.
    #[inline]
    fn decode_canonical_within(
        found: ListKind,
        within: &'de [u8],
        len: usize,
    ) -> Option<Result<Self, FeatureProblem>> {
        Self::decode_canonical(found, within.get(..len)?)
    }
    /// Decodes a present feature into `self`, reusing what `self` holds where it can (a
    /// `Vec`'s or a `String`'s buffer): the same value as [`decode`](Self::decode). On an
    /// error `self` holds some valid value.
    ///
    /// # Errors
    /// As [`decode`](Self::decode).
    #[inline]
    fn decode_into(&mut self, msg: FeatureBytes<'de>) -> Result<(), FeatureProblem> {
        *self = decode_feature::<D, Self>(msg)?;
        Ok(())
    }
    /// [`decode_canonical_within`](Self::decode_canonical_within) into `self`, reusing what it
    /// holds where it can. `None` hands the feature to the general path, as there.
    #[inline]
    fn decode_canonical_into(
        &mut self,
        found: ListKind,
        within: &'de [u8],
        len: usize,
    ) -> Option<Result<(), FeatureProblem>> {
        Some(Self::decode_canonical_within(found, within, len)?.map(|v| *self = v))
    }
    /// The value of an absent feature: `Some(None)` for options, `None` (an error) otherwise.
    #[inline]
    fn absent() -> Option<Self> {
        None
    }
}

/// Implements the field traits for a type that is one value (a scalar feature of one value).
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_scalar_field {
    ($d:ty; $($t:ty),*) => {$(
        impl $crate::__private::EncodeField<$d> for $t {
            const KIND: $crate::__private::ListKind = <$t as $crate::__private::EncodeElem<$d>>::KIND;
            #[inline]
            fn body_len(&self) -> usize {
                $crate::__private::list_body_len::<$d, $t>(::core::slice::from_ref(self))
            }
            #[inline]
            fn put_body(&self, buf: &mut ::std::vec::Vec<u8>) {
                $crate::__private::put_list_body::<$d, $t>(::core::slice::from_ref(self), buf)
            }
        }
        impl<'de> $crate::__private::DecodeField<'de, $d> for $t {
            const KIND: $crate::__private::ListKind = <$t as $crate::__private::DecodeElem<'de, $d>>::KIND;
            #[inline]
            fn decode(
                view: &$crate::__private::FeatureView<'de>,
            ) -> ::core::result::Result<Self, $crate::__private::FeatureProblem> {
                view.one::<$d, $t>()
            }
            #[inline]
            fn decode_canonical(
                found: $crate::__private::ListKind,
                value: &'de [u8],
            ) -> ::core::option::Option<::core::result::Result<Self, $crate::__private::FeatureProblem>> {
                $crate::__private::one_canonical::<$d, $t>(found, value)
            }
            #[inline]
            fn decode_into(
                &mut self,
                msg: $crate::__private::FeatureBytes<'de>,
            ) -> ::core::result::Result<(), $crate::__private::FeatureProblem> {
                $crate::__private::decode_one_into::<$d, $t>(self, msg)
            }
        }
    )*};
}

macro_rules! scalar_fields {
    ($($d:ty),*) => {$(
        crate::__impl_scalar_field!($d; i64, u64, i32, i16, i8, u32, u16, bool, f32, String, Vec<u8>, bytes::Bytes);
        impl<'a> EncodeField<$d> for &'a [u8] {
            const KIND: ListKind = ListKind::Bytes;
            fn body_len(&self) -> usize { list_body_len::<$d, &[u8]>(std::slice::from_ref(self)) }
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, &[u8]>(std::slice::from_ref(self), buf) }
        }
        impl<'de> DecodeField<'de, $d> for &'de [u8] {
            const KIND: ListKind = ListKind::Bytes;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                view.one::<$d, &'de [u8]>()
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                one_canonical::<$d, Self>(found, v)
            }
        }
        impl<'a> EncodeField<$d> for &'a str {
            const KIND: ListKind = ListKind::Bytes;
            fn body_len(&self) -> usize { list_body_len::<$d, &str>(std::slice::from_ref(self)) }
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, &str>(std::slice::from_ref(self), buf) }
        }
        impl<'de> DecodeField<'de, $d> for &'de str {
            const KIND: ListKind = ListKind::Bytes;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                view.one::<$d, &'de str>()
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                one_canonical::<$d, Self>(found, v)
            }
        }
        impl<'a> EncodeField<$d> for std::borrow::Cow<'a, [u8]> {
            const KIND: ListKind = ListKind::Bytes;
            fn body_len(&self) -> usize { list_body_len::<$d, Self>(std::slice::from_ref(self)) }
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, Self>(std::slice::from_ref(self), buf) }
        }
        impl<'de> DecodeField<'de, $d> for std::borrow::Cow<'de, [u8]> {
            const KIND: ListKind = ListKind::Bytes;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                view.one::<$d, Self>()
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                one_canonical::<$d, Self>(found, v)
            }
        }
        impl<'a> EncodeField<$d> for std::borrow::Cow<'a, str> {
            const KIND: ListKind = ListKind::Bytes;
            fn body_len(&self) -> usize { list_body_len::<$d, Self>(std::slice::from_ref(self)) }
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, Self>(std::slice::from_ref(self), buf) }
        }
        impl<'de> DecodeField<'de, $d> for std::borrow::Cow<'de, str> {
            const KIND: ListKind = ListKind::Bytes;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                view.one::<$d, Self>()
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                one_canonical::<$d, Self>(found, v)
            }
        }
        // `u8` alone is an int64 value; it is not a list element because `Vec<u8>` is bytes.
        impl EncodeField<$d> for u8 {
            const KIND: ListKind = ListKind::Int64;
            fn body_len(&self) -> usize { list_body_len::<$d, u16>(&[u16::from(*self)]) }
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, u16>(&[u16::from(*self)], buf) }
        }
        impl<'de> DecodeField<'de, $d> for u8 {
            const KIND: ListKind = ListKind::Int64;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                let v = view.one::<$d, i64>()?;
                u8::try_from(v).map_err(|_| FeatureProblem::Range { value: v.to_string(), ty: "u8" })
            }
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                Some(one_canonical::<$d, i64>(found, v)?.and_then(|v| {
                    u8::try_from(v).map_err(|_| FeatureProblem::Range { value: v.to_string(), ty: "u8" })
                }))
            }
        }
        impl<T: EncodeElem<$d>> EncodeField<$d> for Vec<T> {
            const KIND: ListKind = T::KIND;
            #[inline]
            fn body_len(&self) -> usize { list_body_len::<$d, T>(self) }
            #[inline]
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, T>(self, buf) }
        }
        impl<'de, T: DecodeElem<'de, $d>> DecodeField<'de, $d> for Vec<T> {
            const KIND: ListKind = T::KIND;
            #[inline]
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                let mut out = Vec::new();
                view.extend_into::<$d, T>(&mut out)?;
                Ok(out)
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                Some(same_kind(T::KIND, found).and_then(|()| collect_canonical_within::<$d, T>(v, v.len())))
            }
            #[inline(always)]
            fn decode_canonical_within(found: ListKind, within: &'de [u8], len: usize) -> Option<Result<Self, FeatureProblem>> {
                Some(same_kind(T::KIND, found).and_then(|()| collect_canonical_within::<$d, T>(within, len)))
            }
            #[inline]
            fn decode_into(&mut self, msg: FeatureBytes<'de>) -> Result<(), FeatureProblem> {
                self.clear();
                if let Some(bytes) = msg.single()
                    && let Some((tag, value)) = canonical_feature(bytes)
                    && let Some(found) = <$d as Dialect>::kind(tag)
                {
                    same_kind(T::KIND, found)?;
                    return extend_canonical_within::<$d, T>(value, value.len(), self);
                }
                FeatureView::new::<$d>(msg)?.extend_into::<$d, T>(self)
            }
            #[inline(always)]
            fn decode_canonical_into(&mut self, found: ListKind, within: &'de [u8], len: usize) -> Option<Result<(), FeatureProblem>> {
                self.clear();
                Some(same_kind(T::KIND, found).and_then(|()| extend_canonical_within::<$d, T>(within, len, self)))
            }
        }
        impl<T: EncodeElem<$d>, const N: usize> EncodeField<$d> for [T; N] {
            const KIND: ListKind = T::KIND;
            #[inline]
            fn body_len(&self) -> usize { list_body_len::<$d, T>(self) }
            #[inline]
            fn put_body(&self, buf: &mut Vec<u8>) { put_list_body::<$d, T>(self, buf) }
        }
        impl<'de, T: DecodeElem<'de, $d>, const N: usize> DecodeField<'de, $d> for [T; N] {
            const KIND: ListKind = T::KIND;
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                let mut out = Vec::with_capacity(N);
                view.extend_into::<$d, T>(&mut out)?;
                let found = out.len();
                <[T; N]>::try_from(out).map_err(|_| FeatureProblem::Count { expected: N, found })
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                if let Err(e) = same_kind(T::KIND, found) {
                    return Some(Err(e));
                }
                T::array_packed::<N>(v)
            }
        }
        impl<T: EncodeField<$d>> EncodeField<$d> for Option<T> {
            const KIND: ListKind = T::KIND;
            #[inline]
            fn present(&self) -> bool { self.as_ref().is_some_and(T::present) }
            #[inline]
            fn body_len(&self) -> usize { self.as_ref().map_or(0, T::body_len) }
            #[inline]
            fn put_body(&self, buf: &mut Vec<u8>) {
                if let Some(v) = self { v.put_body(buf) }
            }
        }
        impl<'de, T: DecodeField<'de, $d>> DecodeField<'de, $d> for Option<T> {
            const KIND: ListKind = T::KIND;
            #[inline]
            fn decode(view: &FeatureView<'de>) -> Result<Self, FeatureProblem> {
                T::decode(view).map(Some)
            }
            #[inline]
            fn decode_canonical(found: ListKind, v: &'de [u8]) -> Option<Result<Self, FeatureProblem>> {
                Some(T::decode_canonical(found, v)?.map(Some))
            }
            #[inline]
            fn decode_canonical_within(found: ListKind, within: &'de [u8], len: usize) -> Option<Result<Self, FeatureProblem>> {
                Some(T::decode_canonical_within(found, within, len)?.map(Some))
            }
            #[inline]
            fn absent() -> Option<Self> { Some(None) }
        }
    )*};
}

scalar_fields!(Tf, TfLossy, Of);
crate::__impl_scalar_field!(Of; f64);
crate::__impl_scalar_field!(TfLossy; f64);

/// Where a field lives, for error messages.
#[derive(Debug)]
pub struct FieldInfo {
    /// The Rust type name.
    pub record: &'static str,
    /// The Rust field name.
    pub member: &'static str,
    /// The feature key.
    pub key: &'static str,
}

impl FieldInfo {
    /// An error about this field.
    #[cold]
    pub fn error(&self, e: FeatureProblem) -> Error {
        let detail = format!("{e} (field `{}::{}`)", self.record, self.member);
        Error::feature_problem(e, detail).with_key(self.key)
    }
}

pub(crate) fn kind_tag<D: Dialect, T: EncodeField<D>>() -> u32 {
    // The derive only accepts types whose kind the dialect has; 1 (bytes) is never reached.
    D::tag(T::KIND).unwrap_or(1)
}
