//! Batching: a batch of Avro records to one dense or sparse tensor per feature (batch
//! dimension first), and one Avro record to the features of an output record.

use apache_avro::types::Value;
use tfrecord_core::parse::{DType, Tensor, Tensors, Values};

use super::eval::{Node, eval, type_name, unwrap_union};
use super::spec::{AvroSpec, CompiledFeature, CompiledKind, MAX_ELEMENTS, SparseKey, dtype_name};
use crate::error::{Error, Result};
use crate::row::FeatureRow;

/// A shape as tensorflow-io's messages print it: `[batch,d1,...]`.
fn format_shape(batch: usize, dims: &[usize]) -> String {
    let mut parts = vec![batch.to_string()];
    parts.extend(dims.iter().map(ToString::to_string));
    format!("[{}]", parts.join(","))
}

impl AvroSpec {
    /// Parses a batch of Avro records (each a record [`Value`], as
    /// [`AvroFile`](super::file::AvroFile) yields them) into one tensor per feature, batch
    /// dimension first.
    ///
    /// # Errors
    /// A key expression that does not fit the data (an unknown field, the wrong container), a
    /// value of another type than the dtype, a missing value without a default, more elements
    /// than the shape holds, index and value lists of different lengths, an index outside
    /// `size`. The error names the feature and the record's index within the batch.
    pub fn parse_batch(&self, records: &[Value]) -> Result<Tensors> {
        let mut out = Tensors::new();
        for f in &self.features {
            let t = f
                .tensor(records)
                .map_err(|e| e.with_feature(f.name.clone()))?;
            out.insert(f.name.clone(), t);
        }
        Ok(out)
    }

    /// The features of one Avro record as an output record: a fixed feature's values
    /// row-major (defaults filled in), a var feature's values in traversal order (left out
    /// when it has none), a sparse feature's index lists under the index keys and its values
    /// under the value key (sorted unless `already_sorted`).
    ///
    /// # Errors
    /// As [`parse_batch`](Self::parse_batch) for a batch of this one record.
    pub fn row(&self, record: &Value) -> Result<FeatureRow> {
        let mut row = FeatureRow::new();
        let one = std::slice::from_ref(record);
        for f in &self.features {
            let located = |e: Error| e.with_feature(f.name.clone());
            let t = f.tensor(one).map_err(located)?;
            match (t, &f.kind) {
                (Tensor::Dense { values, .. }, _) => row.insert(f.name.clone(), values),
                (Tensor::Sparse { values, .. }, CompiledKind::Var { .. }) if !values.is_empty() => {
                    row.insert(f.name.clone(), values);
                }
                (
                    Tensor::Sparse {
                        indices,
                        values,
                        dense_shape,
                    },
                    CompiledKind::Sparse {
                        index_keys: index,
                        value_key: value,
                        ..
                    },
                ) => {
                    let rank = dense_shape.len();
                    for (j, key) in index.iter().enumerate() {
                        let column: Vec<i64> = indices
                            .chunks(rank.max(1))
                            .filter_map(|row| row.get(j + 1).copied())
                            .collect();
                        if row.features.contains_key(&key.name) {
                            return Err(located(Error::new(format!(
                                "the index key `{}` is also another feature's key",
                                key.name
                            ))));
                        }
                        row.insert(key.name.clone(), column);
                    }
                    row.insert(value.name.clone(), values);
                }
                _ => {}
            }
        }
        Ok(row)
    }
}

/// The Avro types a dtype takes, for messages.
fn avro_type_names(d: DType) -> &'static str {
    match d {
        DType::Bool => "boolean",
        DType::Int32 => "int",
        DType::Int64 => "long",
        DType::Float => "float",
        DType::Double => "double",
        DType::Bytes | DType::String => "string, bytes, enum or fixed",
    }
}

/// Appends the value `v` to `out`, whose variant is the feature's dtype.
fn push_value(out: &mut Values, v: &Value) -> Result<()> {
    match (&mut *out, v) {
        (Values::Bool(o), Value::Boolean(b)) => o.push(*b),
        (Values::Int32(o), Value::Int(x) | Value::Date(x) | Value::TimeMillis(x)) => o.push(*x),
        (
            Values::Int64(o),
            Value::Long(x)
            | Value::TimeMicros(x)
            | Value::TimestampMillis(x)
            | Value::TimestampMicros(x)
            | Value::TimestampNanos(x)
            | Value::LocalTimestampMillis(x)
            | Value::LocalTimestampMicros(x)
            | Value::LocalTimestampNanos(x),
        ) => o.push(*x),
        (Values::Float32(o), Value::Float(x)) => o.push(*x),
        (Values::Float64(o), Value::Double(x)) => o.push(*x),
        (Values::Bytes(o), Value::String(s) | Value::Enum(_, s)) => o.push(s),
        (Values::Bytes(o), Value::Bytes(b) | Value::Fixed(_, b)) => o.push(b),
        (Values::Bytes(o), Value::Uuid(u)) => o.push(u.to_string()),
        // Logical types over `bytes` and `fixed` are their bytes, as tensorflow-io reads them:
        // a decimal's unscaled two's-complement big-endian integer, a duration's 12 bytes.
        (Values::Bytes(o), Value::Decimal(d)) => match Vec::<u8>::try_from(d) {
            Ok(bytes) => o.push(bytes),
            // Zero bytes (a zero that no byte holds) cannot be sign-extended to its length.
            Err(_) if *d == apache_avro::Decimal::from([0u8; 0]) => o.push(b""),
            Err(e) => return Err(Error::new(format!("cannot read the decimal's bytes: {e}"))),
        },
        (Values::Bytes(o), Value::Duration(d)) => o.push(<[u8; 12]>::from(*d)),
        (out, v) => {
            let d = out.dtype();
            let hint = match (d, v) {
                (DType::Int64, Value::Int(_)) => {
                    "; read the file with a reader schema in which the field is a `long` to \
                     promote it"
                }
                (DType::Double, Value::Float(_) | Value::Int(_) | Value::Long(_)) => {
                    "; read the file with a reader schema in which the field is a `double` to \
                     promote it"
                }
                (_, Value::Array(_)) => "; add `[*]` to the key expression to take its elements",
                _ => "",
            };
            return Err(Error::new(format!(
                "Expected types: '{}' but got type {} (dtype {} takes Avro {} values only{hint})",
                avro_type_names(d),
                type_name(v),
                dtype_name(d),
                avro_type_names(d)
            )));
        }
    }
    Ok(())
}

/// Appends element `i` of a default `src` (or its only element, a scalar default) to `out`
/// (same variant).
fn push_default(out: &mut Values, src: &Values, i: usize) {
    let i = if src.len() == 1 { 0 } else { i };
    match (out, src) {
        (Values::Int64(o), Values::Int64(s)) => o.extend(s.get(i)),
        (Values::Int32(o), Values::Int32(s)) => o.extend(s.get(i)),
        (Values::Bool(o), Values::Bool(s)) => o.extend(s.get(i)),
        (Values::Float32(o), Values::Float32(s)) => o.extend(s.get(i)),
        (Values::Float64(o), Values::Float64(s)) => o.extend(s.get(i)),
        (Values::Bytes(o), Values::Bytes(s)) => o.extend(s.get(i)),
        _ => {}
    }
}

/// The largest list length at each of the `k` levels of the trees.
fn max_counts(trees: &[Node<'_>], k: usize) -> Vec<usize> {
    fn visit(n: &Node<'_>, depth: usize, m: &mut [usize]) {
        if let Node::List(items) = n {
            if let Some(x) = m.get_mut(depth) {
                *x = (*x).max(items.len());
            }
            for it in items {
                visit(it, depth + 1, m);
            }
        }
    }
    let mut m = vec![0; k];
    for t in trees {
        visit(t, 0, &mut m);
    }
    m
}

/// The element count of a shape, an error beyond [`MAX_ELEMENTS`].
fn checked_product(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| Error::new(format!("the output shape {dims:?} has too many elements")))
}

/// A count or position as a tensor index (saturating; counts never come near the limit).
fn saturating_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl CompiledFeature {
    /// The key expression's tree in each record of the batch.
    fn eval_records<'v>(&self, records: &'v [Value]) -> Result<Vec<Node<'v>>> {
        records
            .iter()
            .enumerate()
            .map(|(r, rec)| eval(&self.expr, rec, rec).map_err(|e| e.with_record(r as u64)))
            .collect()
    }

    /// The feature's tensor for a batch of records.
    fn tensor(&self, records: &[Value]) -> Result<Tensor> {
        match &self.kind {
            CompiledKind::Fixed {
                shape,
                default,
                reshape,
            } => self.fixed(records, shape, default.as_ref(), *reshape),
            CompiledKind::Var {
                default,
                skip_missing,
            } => self.var(records, default.as_ref(), *skip_missing),
            CompiledKind::Sparse {
                index_keys,
                value_key,
                size,
                already_sorted,
            } => self.sparse(records, index_keys, value_key, size, *already_sorted),
        }
    }

    /// A `FixedLen` feature's dense tensor.
    fn fixed(
        &self,
        records: &[Value],
        shape: &[Option<u64>],
        default: Option<&Values>,
        reshape: bool,
    ) -> Result<Tensor> {
        let trees = self.eval_records(records)?;
        let batch = trees.len();
        let counts = max_counts(&trees, self.expr_dims);
        let dims: Vec<usize> = if reshape {
            shape
                .iter()
                .map(|d| usize::try_from(d.unwrap_or(0)).unwrap_or(usize::MAX))
                .collect()
        } else {
            shape
                .iter()
                .zip(&counts)
                .map(|(d, &m)| d.map_or(m, |d| usize::try_from(d).unwrap_or(usize::MAX)))
                .collect()
        };
        let per = checked_product(&dims)?;
        let total = per
            .checked_mul(batch)
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(|| {
                Error::new(format!(
                    "a batch of {batch} records makes {per} values each (a tensor of shape \
                     {}): more than the {MAX_ELEMENTS} a batch's tensor may hold; parse fewer \
                     records at a time (`from-avro --tensors --batch-size`)",
                    format_shape(batch, &dims)
                ))
            })?;
        // Row-major strides of the per-record block.
        let mut strides = vec![1usize; dims.len()];
        for j in (0..dims.len().saturating_sub(1)).rev() {
            strides[j] = strides[j + 1].saturating_mul(dims[j + 1]);
        }
        let shape_text = format_shape(batch, &dims);
        let _ = total;
        let mut out = Values::empty(self.dtype);
        let mut slots: Vec<Option<&Value>> = Vec::new();
        for (r, tree) in trees.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            slots.clear();
            slots.resize(per, None);
            let mut reason: Option<String> = None;
            if reshape {
                match tree {
                    Node::List(items) => {
                        if items.len() > per {
                            return Err(located(Error::new(format!(
                                "Per shape {shape_text} expected at most {per} elements but \
                                 received {} elements",
                                items.len()
                            ))));
                        }
                        for (i, it) in items.iter().enumerate() {
                            match it {
                                Node::Value(v) => {
                                    if let Some(slot) = slots.get_mut(i) {
                                        *slot = Some(v);
                                    }
                                }
                                Node::Missing(h) => {
                                    reason.get_or_insert_with(|| h.clone());
                                }
                                Node::List(_) => {}
                            }
                        }
                    }
                    Node::Missing(h) => reason = Some(h.clone()),
                    Node::Value(v) => {
                        if let Some(slot) = slots.first_mut() {
                            *slot = Some(v);
                        }
                    }
                }
            } else {
                fill_slots(
                    tree,
                    0,
                    0,
                    &dims,
                    &strides,
                    &mut slots,
                    &mut reason,
                    &shape_text,
                )
                .map_err(located)?;
            }
            for (i, slot) in slots.iter().enumerate() {
                match (slot, default) {
                    (Some(v), _) => push_value(&mut out, v).map_err(located)?,
                    (None, Some(d)) => push_default(&mut out, d, i),
                    (None, None) => {
                        let present = slots.iter().filter(|s| s.is_some()).count();
                        let why = match reason {
                            Some(h) if h == "the value is null" => format!(
                                "the value is null and the feature has no default (For key \
                                 '{}' expected scalar default but got tensor with shape [0])",
                                self.expr
                            ),
                            Some(h) => format!("{h} (the feature has no default)"),
                            None => format!(
                                "the shape {shape_text} needs {per} values per record but only \
                                 {present} are present, and the feature has no default"
                            ),
                        };
                        return Err(located(Error::new(why)));
                    }
                }
            }
        }
        let mut out_shape = vec![batch];
        out_shape.extend(&dims);
        Ok(Tensor::Dense {
            shape: out_shape,
            values: out,
        })
    }

    /// A `VarLen` feature's sparse tensor.
    fn var(&self, records: &[Value], default: Option<&Values>, skip: bool) -> Result<Tensor> {
        let trees = self.eval_records(records)?;
        let k = self.expr_dims;
        let mut indices: Vec<i64> = Vec::new();
        let mut values = Values::empty(self.dtype);
        let mut path: Vec<i64> = Vec::new();
        for (r, tree) in trees.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            path.clear();
            path.push(saturating_i64(r));
            if k == 0 {
                path.push(0);
            }
            push_var_entries(
                tree,
                k,
                0,
                &mut path,
                &mut indices,
                &mut values,
                default,
                skip,
            )
            .map_err(located)?;
        }
        let mut dense_shape = vec![saturating_i64(trees.len())];
        if k == 0 {
            dense_shape.push(i64::from(!values.is_empty()));
        } else {
            dense_shape.extend(max_counts(&trees, k).into_iter().map(saturating_i64));
        }
        Ok(Tensor::Sparse {
            indices,
            values,
            dense_shape,
        })
    }

    /// A `Sparse` feature's sparse tensor.
    fn sparse(
        &self,
        records: &[Value],
        index: &[SparseKey],
        value: &SparseKey,
        size: &[u64],
        already_sorted: bool,
    ) -> Result<Tensor> {
        let rank = size.len() + 1;
        let mut entries: Vec<(Vec<i64>, usize)> = Vec::new();
        let mut values = Values::empty(self.dtype);
        for (r, rec) in records.iter().enumerate() {
            let located = |e: Error| e.with_record(r as u64);
            // The elements the relative keys are read from (the source is not read when every
            // key starts at the root: it is then only the output name).
            let mut items: Vec<&Value> = Vec::new();
            if index.iter().chain([value]).any(|k| k.relative.is_some()) {
                let source = eval(&self.expr, rec, rec).map_err(located)?;
                collect_items(&source, &mut items);
            }
            let mut elements: Vec<&Value> = Vec::new();
            for it in items {
                match it {
                    Value::Array(a) => elements.extend(a.iter().map(unwrap_union)),
                    other => elements.push(other),
                }
            }
            let read = |key: &SparseKey| -> Result<Vec<&Value>> {
                let mut out = Vec::new();
                let missing = |h: String| Error::new(format!("the key `{}`: {h}", key.name));
                if let Some(e) = &key.root {
                    flatten_values(&eval(e, rec, rec)?, &mut out).map_err(missing)?;
                } else if let Some(e) = &key.relative {
                    for el in &elements {
                        flatten_values(&eval(e, el, rec)?, &mut out).map_err(missing)?;
                    }
                }
                Ok(out)
            };
            let vals = read(value).map_err(located)?;
            let mut idx_lists = Vec::with_capacity(index.len());
            for key in index {
                let list = read(key).map_err(located)?;
                if list.len() != vals.len() {
                    return Err(located(Error::new(format!(
                        "Number of elements in indices ({}) and values ({}) do not match \
                         (index key `{}`, value key `{}`)",
                        list.len(),
                        vals.len(),
                        key.name,
                        value.name
                    ))));
                }
                idx_lists.push(list);
            }
            for (i, v) in vals.iter().enumerate() {
                let mut idx = Vec::with_capacity(rank);
                idx.push(saturating_i64(r));
                for (j, list) in idx_lists.iter().enumerate() {
                    let n = match list.get(i) {
                        Some(Value::Long(n)) => *n,
                        Some(Value::Int(n)) => i64::from(*n),
                        Some(other) => {
                            return Err(located(Error::new(format!(
                                "Expected types: 'long' but got type {} (the index key `{}` \
                                 must hold Avro long or int values)",
                                type_name(other),
                                index[j].name
                            ))));
                        }
                        None => 0,
                    };
                    let limit = size.get(j).copied().unwrap_or(0);
                    if u64::try_from(n).map_or(true, |n| n >= limit) {
                        return Err(located(Error::new(format!(
                            "the index {n} of index key `{}` is outside [0, {limit}) (its size)",
                            index[j].name
                        ))));
                    }
                    idx.push(n);
                }
                push_value(&mut values, v)
                    .map_err(|e| located(Error::new(format!("value key `{}`: {e}", value.name))))?;
                entries.push((idx, entries.len()));
            }
        }
        if !already_sorted {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let perm: Vec<usize> = entries.iter().map(|e| e.1).collect();
        let values = permute(values, &perm);
        let indices: Vec<i64> = entries.into_iter().flat_map(|e| e.0).collect();
        let mut dense_shape = vec![saturating_i64(records.len())];
        dense_shape.extend(size.iter().map(|&s| i64::try_from(s).unwrap_or(i64::MAX)));
        Ok(Tensor::Sparse {
            indices,
            values,
            dense_shape,
        })
    }
}

/// `values` in the order `perm`.
fn permute(values: Values, perm: &[usize]) -> Values {
    fn pick<T: Clone>(v: &[T], perm: &[usize]) -> Vec<T> {
        perm.iter().filter_map(|&i| v.get(i).cloned()).collect()
    }
    match &values {
        Values::Int64(v) => Values::Int64(pick(v, perm)),
        Values::Int32(v) => Values::Int32(pick(v, perm)),
        Values::Bool(v) => Values::Bool(pick(v, perm)),
        Values::Float32(v) => Values::Float32(pick(v, perm)),
        Values::Float64(v) => Values::Float64(pick(v, perm)),
        Values::Bytes(v) => Values::Bytes(perm.iter().filter_map(|&i| v.get(i)).collect()),
        _ => values,
    }
}

/// The values of a tree in traversal order; a missing value is an error (its reason).
fn flatten_values<'v>(n: &Node<'v>, out: &mut Vec<&'v Value>) -> Result<(), String> {
    match n {
        Node::Value(v) => out.push(v),
        Node::Missing(h) => return Err(h.clone()),
        Node::List(items) => {
            for it in items {
                flatten_values(it, out)?;
            }
        }
    }
    Ok(())
}

/// The values of a tree in traversal order, missing ones left out.
fn collect_items<'v>(n: &Node<'v>, out: &mut Vec<&'v Value>) {
    match n {
        Node::Value(v) => out.push(v),
        Node::Missing(_) => {}
        Node::List(items) => items.iter().for_each(|i| collect_items(i, out)),
    }
}

/// Puts the values of a fixed feature's tree (`node` at `depth`, block offset `offset`) into
/// their row-major `slots`; the first missing value's reason goes to `reason`.
#[allow(clippy::too_many_arguments)]
fn fill_slots<'v>(
    node: &Node<'v>,
    depth: usize,
    offset: usize,
    dims: &[usize],
    strides: &[usize],
    slots: &mut [Option<&'v Value>],
    reason: &mut Option<String>,
    shape_text: &str,
) -> Result<()> {
    match node {
        Node::Value(v) => {
            if let Some(s) = slots.get_mut(offset) {
                *s = Some(v);
            }
        }
        Node::Missing(h) => {
            reason.get_or_insert_with(|| h.clone());
        }
        Node::List(items) => {
            let (Some(&d), Some(&stride)) = (dims.get(depth), strides.get(depth)) else {
                return Ok(());
            };
            if items.len() > d {
                return Err(Error::new(format!(
                    "Per shape {shape_text} for dimension {} expected at most {d} elements but \
                     received {} elements",
                    depth + 1,
                    items.len()
                )));
            }
            for (i, it) in items.iter().enumerate() {
                fill_slots(
                    it,
                    depth + 1,
                    offset + i * stride,
                    dims,
                    strides,
                    slots,
                    reason,
                    shape_text,
                )?;
            }
        }
    }
    Ok(())
}

/// Appends the entries of a var feature's tree: `path` holds the batch index (and the levels
/// above `depth`).
#[allow(clippy::too_many_arguments)]
fn push_var_entries(
    node: &Node<'_>,
    k: usize,
    depth: usize,
    path: &mut Vec<i64>,
    indices: &mut Vec<i64>,
    values: &mut Values,
    default: Option<&Values>,
    skip: bool,
) -> Result<()> {
    match node {
        Node::Value(v) => {
            push_value(values, v)?;
            indices.extend_from_slice(path);
        }
        Node::Missing(h) => {
            if skip {
                return Ok(());
            }
            match default {
                // A missing value at the innermost level takes the default; above it there are
                // no positions to fill.
                Some(d) if depth >= k => {
                    push_default(values, d, 0);
                    indices.extend_from_slice(path);
                }
                Some(_) => {}
                None => {
                    return Err(Error::new(if h == "the value is null" {
                        "the value is null and the feature has no default".to_string()
                    } else {
                        format!("{h} (the feature has no default)")
                    }));
                }
            }
        }
        Node::List(items) => {
            for (i, it) in items.iter().enumerate() {
                path.push(saturating_i64(i));
                push_var_entries(it, k, depth + 1, path, indices, values, default, skip)?;
                path.pop();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use apache_avro::{Days, Decimal, Duration, Millis, Months};

    use super::*;

    /// A `bytes` feature reads a decimal or a duration as its bytes, as tensorflow-io does.
    #[test]
    fn logical_types_over_bytes_are_their_bytes() {
        let schema = tfrecord_schema::ir::Schema::from_toml_str(
            "[records.R.features.d]\ndtype = \"bytes\"\n[records.R.features.t]\ndtype = \"bytes\"\n",
            "s.toml",
        )
        .expect("a spec");
        let spec = AvroSpec::from_record(&schema.records[0]).expect("an Avro spec");
        let duration = Duration::new(Months::new(1), Days::new(2), Millis::new(3));
        let record = Value::Record(vec![
            ("d".to_string(), Value::Decimal(Decimal::from([0xff, 0x85]))),
            ("t".to_string(), Value::Duration(duration)),
        ]);
        let row = spec.row(&record).expect("reads");
        assert_eq!(row.features["d"], Values::from(&[0xff_u8, 0x85][..]));
        let empty = Value::Record(vec![
            ("d".to_string(), Value::Decimal(Decimal::from([0u8; 0]))),
            ("t".to_string(), Value::Duration(duration)),
        ]);
        let row = spec.row(&empty).expect("reads a decimal of no bytes");
        assert_eq!(row.features["d"], Values::from(&b""[..]));
        let want: [u8; 12] = [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0];
        assert_eq!(row.features["t"], Values::from(&want[..]));
    }

    /// A batch whose tensor would pass the element limit is an error saying how many records
    /// make how many values, and to parse fewer at a time.
    #[test]
    fn a_batch_past_the_element_limit_says_to_parse_fewer() {
        let schema = tfrecord_schema::ir::Schema::from_toml_str(
            "[records.R.features.x]\ndtype = \"int64\"\nsource = \"arr[*]\"\n\
             shape = [65536]\ndefault = 0\n",
            "s.toml",
        )
        .expect("a spec");
        let spec = AvroSpec::from_record(&schema.records[0]).expect("an Avro spec");
        let record = Value::Record(vec![("arr".to_string(), Value::Array(Vec::new()))]);
        let records = vec![record; MAX_ELEMENTS / 65536 + 1];
        let e = spec.parse_batch(&records).unwrap_err().to_string();
        assert!(
            e.contains("a batch of 1025 records makes 65536 values each"),
            "{e}"
        );
        assert!(e.contains("[1025,65536]"), "{e}");
        assert!(e.contains("--batch-size"), "{e}");
    }
}
