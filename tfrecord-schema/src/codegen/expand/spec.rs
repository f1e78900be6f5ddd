//! `RecordSchema` for a derived record: the IR the derive lowered the struct to, rebuilt at run
//! time, so that the runtime consumers (the columnar decoder, the Arrow layer) read a derived
//! type by the same spec model a TOML spec gives them.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::quote;

use super::heads::ImplHeads;
use crate::codegen::attrs::Lowered;
use crate::ir::{
    DType, Dialect, FeatureKind, Field, Literal, Partition, Presence, Record, RecordKind,
};

/// `impl RecordSchema for Type`.
pub(crate) fn expand_schema(input: &syn::DeriveInput, lowered: &Lowered) -> TokenStream {
    let krate = &lowered.krate;
    let p = quote!(#krate::__private);
    let head = ImplHeads::new(input).encode(&quote!(#p::RecordSchema));
    let record = record(&p, &lowered.record);
    quote! {
        #[automatically_derived]
        #head {
            fn record_schema() -> #p::ir::Record {
                #record
            }
        }
    }
}

fn record(p: &TokenStream, r: &Record) -> TokenStream {
    let name = &r.name;
    let kind = match r.kind {
        RecordKind::SequenceExample => quote!(#p::ir::RecordKind::SequenceExample),
        _ => quote!(#p::ir::RecordKind::Example),
    };
    let dialect = match r.dialect {
        Dialect::Tf => quote!(#p::ir::Dialect::Tf),
        Dialect::Of => quote!(#p::ir::Dialect::Of),
        _ => quote!(#p::ir::Dialect::Both),
    };
    let deny = r.deny_unknown_keys;
    let fields = r.fields.iter().map(|f| field(p, f));
    quote! {
        #p::ir::Record {
            name: #p::ToString::to_string(#name),
            kind: #kind,
            dialect: #dialect,
            deny_unknown_keys: #deny,
            fields: #p::vec![#(#fields),*],
            doc: #p::Vec::new(),
            origin: #p::ir::Origin::default(),
        }
    }
}

fn string(p: &TokenStream, s: &str) -> TokenStream {
    quote!(#p::ToString::to_string(#s))
}

fn field(p: &TokenStream, f: &Field) -> TokenStream {
    let (name, member, key) = (string(p, &f.name), string(p, &f.member), string(p, &f.key));
    let source = match &f.source {
        Some(s) => {
            let s = string(p, s);
            quote!(#p::Some(#s))
        }
        None => quote!(#p::None),
    };
    let dtype = match f.dtype {
        Some(d) => {
            let d = dtype(p, d);
            quote!(#p::Some(#d))
        }
        None => quote!(#p::None),
    };
    let kind = kind(p, &f.kind);
    let presence = match &f.presence {
        Presence::Required => quote!(#p::ir::Presence::Required),
        Presence::Optional => quote!(#p::ir::Presence::Optional),
        Presence::TypeDefault => quote!(#p::ir::Presence::TypeDefault),
        Presence::Default(l) => {
            let l = literal(p, l);
            quote!(#p::ir::Presence::Default(#l))
        }
    };
    let (skip, flatten, lossy) = (f.skip, f.flatten, f.lossy);
    quote! {
        #p::ir::Field {
            name: #name,
            member: #member,
            key: #key,
            source: #source,
            dtype: #dtype,
            kind: #kind,
            presence: #presence,
            skip: #skip,
            flatten: #flatten,
            lossy: #lossy,
            doc: #p::Vec::new(),
            origin: #p::ir::Origin::default(),
        }
    }
}

fn dtype(p: &TokenStream, d: DType) -> TokenStream {
    match d {
        DType::Int64 => quote!(#p::ir::DType::Int64),
        DType::Int32 => quote!(#p::ir::DType::Int32),
        DType::Bool => quote!(#p::ir::DType::Bool),
        DType::Float => quote!(#p::ir::DType::Float),
        DType::Double => quote!(#p::ir::DType::Double),
        DType::Bytes => quote!(#p::ir::DType::Bytes),
        DType::String => quote!(#p::ir::DType::String),
    }
}

fn dims(p: &TokenStream, shape: &[u64]) -> TokenStream {
    let d = shape.iter().map(|d| Lit::u64_suffixed(*d));
    quote!(#p::vec![#(#d),*])
}

fn strings(p: &TokenStream, v: &[String]) -> TokenStream {
    let s = v.iter().map(|s| string(p, s));
    quote!(#p::vec![#(#s),*])
}

fn kind(p: &TokenStream, k: &FeatureKind) -> TokenStream {
    match k {
        FeatureKind::Fixed { shape } => {
            let shape = dims(p, shape);
            quote!(#p::ir::FeatureKind::Fixed { shape: #shape })
        }
        FeatureKind::Var { rank } => {
            let rank = match rank {
                Some(r) => quote!(#p::Some(#r)),
                None => quote!(#p::None),
            };
            quote!(#p::ir::FeatureKind::Var { rank: #rank })
        }
        FeatureKind::Sparse {
            index_keys,
            size,
            already_sorted,
        } => {
            let (index_keys, size) = (strings(p, index_keys), dims(p, size));
            quote! {
                #p::ir::FeatureKind::Sparse {
                    index_keys: #index_keys,
                    size: #size,
                    already_sorted: #already_sorted,
                }
            }
        }
        FeatureKind::Steps { step } => {
            let step = kind(p, step);
            quote!(#p::ir::FeatureKind::Steps { step: #p::Box::new(#step) })
        }
        FeatureKind::FixedSequence {
            shape,
            allow_missing,
        } => {
            let shape = shape.iter().map(|d| match d {
                Some(d) => quote!(#p::Some(#d)),
                None => quote!(#p::None),
            });
            quote! {
                #p::ir::FeatureKind::FixedSequence {
                    shape: #p::vec![#(#shape),*],
                    allow_missing: #allow_missing,
                }
            }
        }
        FeatureKind::Ragged {
            value_key,
            partitions,
            row_splits_dtype,
        } => {
            let value_key = string(p, value_key);
            let parts = partitions.iter().map(|part| {
                let (variant, arg) = match part {
                    Partition::RowSplits(k) => (quote!(RowSplits), string(p, k)),
                    Partition::RowLengths(k) => (quote!(RowLengths), string(p, k)),
                    Partition::RowStarts(k) => (quote!(RowStarts), string(p, k)),
                    Partition::RowLimits(k) => (quote!(RowLimits), string(p, k)),
                    Partition::ValueRowIds(k) => (quote!(ValueRowIds), string(p, k)),
                    Partition::UniformRowLength(n) => (quote!(UniformRowLength), quote!(#n)),
                };
                quote!(#p::ir::Partition::#variant(#arg))
            });
            let splits = dtype(p, *row_splits_dtype);
            quote! {
                #p::ir::FeatureKind::Ragged {
                    value_key: #value_key,
                    partitions: #p::vec![#(#parts),*],
                    row_splits_dtype: #splits,
                }
            }
        }
    }
}

fn literal(p: &TokenStream, l: &Literal) -> TokenStream {
    match l {
        Literal::Int(i) => {
            let i = Lit::i128_suffixed(*i);
            quote!(#p::ir::Literal::Int(#i))
        }
        Literal::Float(f) => {
            let bits = Lit::u64_suffixed(f.to_bits());
            quote!(#p::ir::Literal::Float(f64::from_bits(#bits)))
        }
        Literal::Str(s) => {
            let s = string(p, s);
            quote!(#p::ir::Literal::Str(#s))
        }
        Literal::Bool(b) => quote!(#p::ir::Literal::Bool(#b)),
        Literal::List(items) => {
            let items = items.iter().map(|i| literal(p, i));
            quote!(#p::ir::Literal::List(#p::vec![#(#items),*]))
        }
    }
}
