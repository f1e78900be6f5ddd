//! The workloads' records as derived types, and the per-feature columns `read_parse` fills.
//!
//! `read_parse` in the peer protocol means: decode each record and extract typed values for the
//! full sidecar spec into per-feature columns (fixed-length counts checked, var-len row lengths
//! kept), consumed in batches of 1024 -- what `TFRecordDataset.batch(1024).map(parse_example)`
//! produces. Here the derived decoder does the decoding and the checks (a missing feature, a
//! wrong kind or a wrong count of a `[T; N]` field is an error), and [`Shape::push`] appends the
//! typed fields to columns that are flushed every [`BATCH`] rows.

use std::collections::BTreeMap;

use tfrecord_core::{Container, DecodeOwned, RecordSchema};
use tfrecord_core::{
    Decode, Encode, Example, Ragged, SequenceExample, TfExample, TfSequenceExample,
};

use crate::sidecar::{Feat, Sidecar};

/// Rows per batch, as the peers' `batch(1024)`.
pub(crate) const BATCH: usize = 1024;

// ------------------------------------------------------------------------------------ columns

/// A column of variable-length byte strings: the bytes back to back and each one's end.
#[derive(Default)]
pub(crate) struct BytesCol {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl BytesCol {
    #[inline]
    fn push(&mut self, v: &[u8]) {
        self.data.extend_from_slice(v);
        self.ends
            .push(u32::try_from(self.data.len()).unwrap_or(u32::MAX));
    }
}

/// A var-len column: the values of every row back to back, and each row's length.
pub(crate) struct RaggedCol<T> {
    values: Vec<T>,
    lens: Vec<u32>,
}

impl<T> Default for RaggedCol<T> {
    fn default() -> Self {
        RaggedCol {
            values: Vec::new(),
            lens: Vec::new(),
        }
    }
}

impl<T: Copy> RaggedCol<T> {
    #[inline]
    fn push(&mut self, v: &[T]) {
        self.values.extend_from_slice(v);
        self.lens.push(u32::try_from(v.len()).unwrap_or(u32::MAX));
    }
}

/// A set of columns for one workload.
pub(crate) trait ColSet: Default + Send {
    /// Values held (strings count one each; row lengths do not count).
    fn nvalues(&self) -> u64;
    /// Empties every column, keeping the allocations.
    fn clear(&mut self);
}

/// Columns consumed every [`BATCH`] rows: the consumer only counts values and lets
/// `black_box` see the buffers.
#[derive(Default)]
pub(crate) struct Batcher<K> {
    /// The columns of the batch being filled.
    pub(crate) cols: K,
    rows: usize,
    /// Rows flushed so far.
    pub(crate) total_rows: u64,
    /// Values flushed so far.
    pub(crate) total_values: u64,
}

impl<K: ColSet> Batcher<K> {
    /// Ends one row; a full batch is consumed.
    #[inline]
    pub(crate) fn end_row(&mut self) {
        self.rows += 1;
        if self.rows == BATCH {
            self.flush();
        }
    }

    /// Consumes the batch so far (also a partial last batch).
    pub(crate) fn flush(&mut self) {
        self.total_values += self.cols.nvalues();
        self.total_rows += self.rows as u64;
        std::hint::black_box(&self.cols);
        self.cols.clear();
        self.rows = 0;
    }
}

fn len64<T>(v: &[T]) -> u64 {
    v.len() as u64
}

// ------------------------------------------------------------------------------------ shapes

/// A workload's record type: how to decode it, extract it into columns, and build it from
/// typed values.
pub(crate) trait Shape: 'static {
    /// The record message.
    type C: Container;
    /// The derived type `read_parse` decodes into (borrows bytes from the record).
    type Rec<'a>: Decode<'a, Self::C>;
    /// The owned derived type `write_build` builds and encodes.
    type Owned: Encode<Self::C> + Send;
    /// The typed per-record values `write_build` starts from.
    type Values: Clone + Send + Sync;
    /// The columns of one batch.
    type Cols: ColSet;
    /// The owned type a user reads with `Reader::<T>::open` (`String`, `Vec<u8>`, `Vec<i64>`,
    /// arrays; `Vec<Vec<i64>>` for a feature list of int64 lists).
    type User: DecodeOwned<Self::C> + Send;
    /// The derived type `read_parse` `columns` reads as columnar batches (`Reader::batches`):
    /// the owned record, strings as bytes as the sidecar's spec has them.
    type Columnar: RecordSchema;
    /// The sidecar spec this type implements: (features or context features, feature lists).
    fn spec() -> (BTreeMap<String, Feat>, BTreeMap<String, Feat>);
    /// Appends one decoded record to the columns.
    fn push(cols: &mut Self::Cols, rec: &Self::Rec<'_>);
    /// The number of values a batch of owned records holds (strings count one each, as in the
    /// columns), counted as the columns row counts its batches' values: the values themselves
    /// are not read, as TensorFlow's peer drains its batches without reading them.
    fn consume(batch: &[Self::User]) -> u64;
    /// The typed values of a decoded record (setup for `write_build`, not timed).
    fn values(rec: &Self::Rec<'_>) -> Self::Values;
    /// Builds the owned record from typed values (timed in `write_build`).
    fn build(v: Self::Values) -> Self::Owned;
    /// Synthetic values of record `i`, for the unit tests.
    #[cfg(test)]
    #[allow(clippy::cast_possible_wrap)] // small synthetic counters
    fn sample(i: u64) -> Self::Values;
}

/// Checks that the sidecar's spec is the one the derived type implements.
pub(crate) fn check_spec<S: Shape>(sc: &Sidecar) -> Result<(), String> {
    let (a, b) = S::spec();
    let (sa, sb) = if sc.is_sequence() {
        (&sc.context_features, &sc.sequence_features)
    } else {
        (&sc.features, &sc.sequence_features)
    };
    if &a != sa || &b != sb {
        return Err(format!(
            "{}: the sidecar's feature spec is not the one the derived type implements",
            sc.name
        ));
    }
    Ok(())
}

/// Decodes one record as `S::Rec`.
#[inline]
pub(crate) fn decode<'a, S: Shape>(bytes: &'a [u8]) -> tfrecord_core::Result<S::Rec<'a>> {
    <S::Rec<'a> as Decode<'a, S::C>>::decode(bytes)
}

fn feat(kind: &str, dtype: &str, shape: &[u64]) -> Feat {
    Feat {
        kind: kind.into(),
        dtype: dtype.into(),
        shape: shape.to_vec(),
    }
}

// ------------------------------------------------------------------------------------ mnist

/// `image/encoded` (784 bytes) and `label`, borrowing the image from the record.
#[derive(Example)]
#[example(dialect = "tf")]
pub(crate) struct MnistRef<'a> {
    #[example(key = "image/encoded")]
    image: &'a [u8],
    label: i64,
}

/// The owned MNIST record.
#[derive(Example, Clone)]
#[example(dialect = "tf")]
pub(crate) struct Mnist {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    label: i64,
}

/// MNIST columns.
#[derive(Default)]
pub(crate) struct MnistCols {
    image: BytesCol,
    label: Vec<i64>,
}

impl ColSet for MnistCols {
    fn nvalues(&self) -> u64 {
        len64(&self.image.ends) + len64(&self.label)
    }
    fn clear(&mut self) {
        self.image.data.clear();
        self.image.ends.clear();
        self.label.clear();
    }
}

/// The `mnist` (and `mnist_gz`) workload.
pub(crate) enum MnistShape {}

impl Shape for MnistShape {
    type C = TfExample;
    type Rec<'a> = MnistRef<'a>;
    type Owned = Mnist;
    type Values = (Vec<u8>, i64);
    type Cols = MnistCols;
    type User = Mnist;
    type Columnar = Mnist;

    fn spec() -> (BTreeMap<String, Feat>, BTreeMap<String, Feat>) {
        let mut f = BTreeMap::new();
        f.insert("image/encoded".into(), feat("fixed", "string", &[]));
        f.insert("label".into(), feat("fixed", "int64", &[]));
        (f, BTreeMap::new())
    }
    #[inline]
    fn push(c: &mut MnistCols, r: &MnistRef<'_>) {
        c.image.push(r.image);
        c.label.push(r.label);
    }
    fn consume(batch: &[Mnist]) -> u64 {
        std::hint::black_box(batch);
        2 * len64(batch)
    }
    fn values(r: &MnistRef<'_>) -> (Vec<u8>, i64) {
        (r.image.to_vec(), r.label)
    }
    #[inline]
    fn build((image, label): (Vec<u8>, i64)) -> Mnist {
        Mnist { image, label }
    }
    #[cfg(test)]
    #[allow(clippy::cast_possible_wrap)] // small synthetic counters
    fn sample(i: u64) -> (Vec<u8>, i64) {
        (
            (0..784u64).map(|p| ((p + i) % 256) as u8).collect(),
            (i % 10) as i64,
        )
    }
}

// ------------------------------------------------------------------------------------ ctr

/// Generates the CTR record types: 13 int64 scalars `I1..I13`, 26 bytes scalars `C1..C26`,
/// `hist` (var-len int64) and `dense` (16 floats).
macro_rules! ctr_types {
    ([$($i:ident),*], [$($c:ident),*]) => {
        /// The CTR record, borrowing the 26 strings from the record.
        #[derive(Example)]
        #[example(dialect = "tf", rename_all = "UPPERCASE")]
        pub(crate) struct CtrRef<'a> {
            $($i: i64,)*
            $($c: &'a [u8],)*
            #[example(key = "hist")]
            hist: Vec<i64>,
            #[example(key = "dense")]
            dense: [f32; 16],
        }

        /// The owned CTR record.
        #[derive(Example, Clone)]
        #[example(dialect = "tf", rename_all = "UPPERCASE")]
        pub(crate) struct Ctr {
            $($i: i64,)*
            $($c: Vec<u8>,)*
            #[example(key = "hist")]
            hist: Vec<i64>,
            #[example(key = "dense")]
            dense: [f32; 16],
        }

        /// The CTR record as a user reads it: the 26 categories as `String`s.
        #[derive(Example)]
        #[example(dialect = "tf", rename_all = "UPPERCASE")]
        pub(crate) struct CtrRow {
            $($i: i64,)*
            $($c: String,)*
            #[example(key = "hist")]
            hist: Vec<i64>,
            #[example(key = "dense")]
            dense: [f32; 16],
        }

        /// Typed CTR values, as a user holds them before building records.
        #[derive(Clone)]
        pub(crate) struct CtrValues {
            ints: [i64; 13],
            cats: [Vec<u8>; 26],
            hist: Vec<i64>,
            dense: [f32; 16],
        }

        impl Shape for CtrShape {
            type C = TfExample;
            type Rec<'a> = CtrRef<'a>;
            type Owned = Ctr;
            type Values = CtrValues;
            type Cols = CtrCols;
            type User = CtrRow;
            type Columnar = Ctr;

            fn spec() -> (BTreeMap<String, Feat>, BTreeMap<String, Feat>) {
                let mut f = BTreeMap::new();
                for i in 1..=13 {
                    f.insert(format!("I{i}"), feat("fixed", "int64", &[]));
                }
                for i in 1..=26 {
                    f.insert(format!("C{i}"), feat("fixed", "string", &[]));
                }
                f.insert("hist".into(), feat("varlen", "int64", &[]));
                f.insert("dense".into(), feat("fixed", "float32", &[16]));
                (f, BTreeMap::new())
            }
            #[inline]
            fn push(c: &mut CtrCols, r: &CtrRef<'_>) {
                for (col, v) in c.ints.iter_mut().zip([$(r.$i),*]) {
                    col.push(v);
                }
                for (col, v) in c.cats.iter_mut().zip([$(r.$c),*]) {
                    col.push(v);
                }
                c.hist.push(&r.hist);
                c.dense.extend_from_slice(&r.dense);
            }
            fn consume(batch: &[CtrRow]) -> u64 {
                std::hint::black_box(batch);
                batch.iter().map(|r| 13 + 26 + len64(&r.hist) + 16).sum()
            }
            fn values(r: &CtrRef<'_>) -> CtrValues {
                CtrValues {
                    ints: [$(r.$i),*],
                    cats: [$(r.$c.to_vec()),*],
                    hist: r.hist.clone(),
                    dense: r.dense,
                }
            }
            #[inline]
            fn build(v: CtrValues) -> Ctr {
                let [$($i),*] = v.ints;
                let [$($c),*] = v.cats;
                Ctr { $($i,)* $($c,)* hist: v.hist, dense: v.dense }
            }
            #[cfg(test)]
            #[allow(clippy::cast_possible_wrap)] // small synthetic counters
            fn sample(i: u64) -> CtrValues {
                CtrValues {
                    ints: std::array::from_fn(|k| (i * 31 + k as u64) as i64 - 1),
                    cats: std::array::from_fn(|k| format!("{:08x}", i * 97 + k as u64).into_bytes()),
                    hist: (0..i % 51).map(|k| (k * 7919 + i) as i64).collect(),
                    dense: std::array::from_fn(|k| k as f32 - i as f32),
                }
            }
        }
    };
}

ctr_types!(
    [i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13],
    [
        c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20,
        c21, c22, c23, c24, c25, c26
    ]
);

/// CTR columns: one per feature.
#[derive(Default)]
pub(crate) struct CtrCols {
    ints: [Vec<i64>; 13],
    cats: [BytesCol; 26],
    hist: RaggedCol<i64>,
    dense: Vec<f32>,
}

impl ColSet for CtrCols {
    fn nvalues(&self) -> u64 {
        self.ints.iter().map(|c| len64(c)).sum::<u64>()
            + self.cats.iter().map(|c| len64(&c.ends)).sum::<u64>()
            + len64(&self.hist.values)
            + len64(&self.dense)
    }
    fn clear(&mut self) {
        self.ints.iter_mut().for_each(Vec::clear);
        for c in &mut self.cats {
            c.data.clear();
            c.ends.clear();
        }
        self.hist.values.clear();
        self.hist.lens.clear();
        self.dense.clear();
    }
}

/// The `ctr` workload.
pub(crate) enum CtrShape {}

// ------------------------------------------------------------------------------------ seq

/// The `seq` SequenceExample: context `id`, `lang`; feature lists `tokens` (an int64 list per
/// step, held flat) and `scores` (one float per step). `lang` borrows from the record.
#[derive(SequenceExample)]
pub(crate) struct SeqRef<'a> {
    id: i64,
    lang: &'a [u8],
    #[example(sequence)]
    tokens: Ragged<i64>,
    #[example(sequence)]
    scores: Vec<f32>,
}

/// The owned `seq` record.
#[derive(SequenceExample, Clone)]
pub(crate) struct Seq {
    id: i64,
    lang: Vec<u8>,
    #[example(sequence)]
    tokens: Ragged<i64>,
    #[example(sequence)]
    scores: Vec<f32>,
}

/// The `seq` record as a user reads it: `tokens` as one `Vec<i64>` per step.
#[derive(SequenceExample)]
pub(crate) struct SeqRow {
    id: i64,
    lang: String,
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
}

/// `seq` columns: `tokens` keeps each step's length and each row's step count.
#[derive(Default)]
pub(crate) struct SeqCols {
    id: Vec<i64>,
    lang: BytesCol,
    tokens: Vec<i64>,
    token_step_lens: Vec<u32>,
    token_row_lens: Vec<u32>,
    scores: RaggedCol<f32>,
}

impl ColSet for SeqCols {
    fn nvalues(&self) -> u64 {
        len64(&self.id) + len64(&self.lang.ends) + len64(&self.tokens) + len64(&self.scores.values)
    }
    fn clear(&mut self) {
        self.id.clear();
        self.lang.data.clear();
        self.lang.ends.clear();
        self.tokens.clear();
        self.token_step_lens.clear();
        self.token_row_lens.clear();
        self.scores.values.clear();
        self.scores.lens.clear();
    }
}

/// The `seq` workload.
pub(crate) enum SeqShape {}

impl Shape for SeqShape {
    type C = TfSequenceExample;
    type Rec<'a> = SeqRef<'a>;
    type Owned = Seq;
    type Values = (i64, Vec<u8>, Ragged<i64>, Vec<f32>);
    type Cols = SeqCols;
    type User = SeqRow;
    type Columnar = Seq;

    fn spec() -> (BTreeMap<String, Feat>, BTreeMap<String, Feat>) {
        let mut c = BTreeMap::new();
        c.insert("id".into(), feat("fixed", "int64", &[]));
        c.insert("lang".into(), feat("fixed", "string", &[]));
        let mut s = BTreeMap::new();
        s.insert("tokens".into(), feat("varlen", "int64", &[]));
        s.insert("scores".into(), feat("fixed_seq", "float32", &[]));
        (c, s)
    }
    #[inline]
    fn push(c: &mut SeqCols, r: &SeqRef<'_>) {
        c.id.push(r.id);
        c.lang.push(r.lang);
        c.tokens.extend_from_slice(r.tokens.values());
        for step in r.tokens.iter() {
            c.token_step_lens
                .push(u32::try_from(step.len()).unwrap_or(u32::MAX));
        }
        c.token_row_lens
            .push(u32::try_from(r.tokens.len()).unwrap_or(u32::MAX));
        c.scores.push(&r.scores);
    }
    fn consume(batch: &[SeqRow]) -> u64 {
        std::hint::black_box(batch);
        let steps = |r: &SeqRow| r.tokens.iter().map(|step| len64(step)).sum::<u64>();
        batch.iter().map(|r| 2 + steps(r) + len64(&r.scores)).sum()
    }
    fn values(r: &SeqRef<'_>) -> Self::Values {
        (r.id, r.lang.to_vec(), r.tokens.clone(), r.scores.clone())
    }
    #[inline]
    fn build((id, lang, tokens, scores): Self::Values) -> Seq {
        Seq {
            id,
            lang,
            tokens,
            scores,
        }
    }
    #[cfg(test)]
    #[allow(clippy::cast_possible_wrap)] // small synthetic counters
    fn sample(i: u64) -> Self::Values {
        let steps = 10 + i % 50;
        (
            i as i64,
            b"en".to_vec(),
            (0..steps)
                .map(|s| (0..1 + (s + i) % 4).map(move |k| (s * 7 + k) as i64))
                .collect(),
            (0..steps).map(|s| s as f32 * 0.5).collect(),
        )
    }
}
