//! The default value of a field, typed as the field: from its `default = ..` literal, or the
//! type's `Default`.

use proc_macro2::{Literal as Lit, Span, TokenStream};
use quote::{quote, quote_spanned};

use crate::codegen::attrs::{Binding, BytesRepr, Container};
use crate::ir::{DType, Field, Literal, Presence};

/// Tokens for a float default `v` of a field of `dtype`: as written, or, when `narrow`, the
/// float nearest to it (a `lossy` `f64` stored in a `float_list` reads back as that float, and
/// an absent one must too: `tf.io.FixedLenFeature([], tf.float32, default_value=1e300)` gives
/// infinity).
fn float_tokens(v: f64, dtype: Option<DType>, narrow: bool) -> TokenStream {
    #[allow(clippy::cast_possible_truncation)] // the point: rounded to the nearest float
    let v = if narrow { f64::from(v as f32) } else { v };
    let ty = if dtype == Some(DType::Double) {
        quote!(f64)
    } else {
        quote!(f32)
    };
    if v.is_finite() {
        let l = Lit::f64_unsuffixed(v);
        quote!(#l)
    } else if v.is_nan() {
        quote!(::core::primitive::#ty::NAN)
    } else if v > 0.0 {
        quote!(::core::primitive::#ty::INFINITY)
    } else {
        quote!(::core::primitive::#ty::NEG_INFINITY)
    }
}

/// Tokens for one scalar of a default literal, typed for the field's value type; `narrow`:
/// floats as the nearest `f32` ([`float_tokens`]).
fn scalar_tokens(
    lit: &Literal,
    dtype: Option<DType>,
    repr: BytesRepr,
    narrow: bool,
) -> TokenStream {
    match (lit, dtype) {
        (Literal::Int(v), Some(DType::Float | DType::Double)) => {
            #[allow(clippy::cast_precision_loss)]
            let f = *v as f64;
            float_tokens(f, dtype, narrow)
        }
        (Literal::Int(v), _) => {
            let l = Lit::i128_unsuffixed(*v);
            quote!(#l)
        }
        (Literal::Float(v), _) => float_tokens(*v, dtype, narrow),
        (Literal::Bool(b), _) => quote!(#b),
        (Literal::Str(s), _) => match repr {
            BytesRepr::From => quote!(::core::convert::From::from(#s)),
            BytesRepr::Slice => quote!(#s.as_bytes()),
            BytesRepr::CowSlice => quote!(::core::convert::From::from(#s.as_bytes())),
            BytesRepr::Str => quote!(#s),
        },
        (Literal::List(items), _) => {
            let inner = items.iter().map(|i| scalar_tokens(i, dtype, repr, narrow));
            quote!([#(#inner),*])
        }
    }
}

/// The default expression of a field, typed as the field; `narrow`: float values as the
/// nearest `f32` (a `lossy` field in a `tf.train.Example`).
pub(super) fn default_expr(field: &Field, b: &Binding, span: Span, narrow: bool) -> TokenStream {
    let ty = &b.ty;
    let value = match &field.presence {
        Presence::Default(lit) => {
            let flat = lit.scalars();
            let items = flat
                .iter()
                .map(|l| scalar_tokens(l, b.info.dtype, b.info.bytes_repr, narrow));
            // One value fills a whole fixed shape (`default = 0` with `shape = [3]`).
            let fill = match (&flat[..], field.kind.fixed_count()) {
                ([one], Some(n)) if n > 1 => Some((*one, n)),
                _ => None,
            };
            match (b.info.container, fill) {
                (Container::Scalar, _) => {
                    scalar_tokens(lit, b.info.dtype, b.info.bytes_repr, narrow)
                }
                (Container::Vec | Container::Sparse, Some((one, n))) => {
                    let one = scalar_tokens(one, b.info.dtype, b.info.bytes_repr, narrow);
                    let n = Lit::u64_unsuffixed(n);
                    quote!(::core::iter::Iterator::collect((0..#n).map(|_| #one)))
                }
                (Container::Array(_), Some((one, _))) => {
                    let one = scalar_tokens(one, b.info.dtype, b.info.bytes_repr, narrow);
                    quote!(::core::array::from_fn(|_| #one))
                }
                (Container::Vec | Container::Sparse, None) => quote!(::std::vec![#(#items),*]),
                (Container::Array(_), None) => quote!([#(#items),*]),
            }
        }
        _ => quote!(::core::default::Default::default()),
    };
    quote_spanned!(span=> { let __v: #ty = #value; __v })
}
