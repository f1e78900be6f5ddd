//! `read_parse` / `parse_mem` through the runtime spec parser (`tfrecord_core::parse`), with
//! the spec built from the sidecar at run time: the analogue of `tf.io.parse_example(batch,
//! spec)` and `tf.io.parse_sequence_example`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use tfrecord_core::parse::{
    Buffers, DType, ExampleParser, FeatureSpec, SequenceExampleParser, Spec, Tensor, Tensors,
};

use tfrecord_core::Chunk;

use crate::pipeline::{BatchSink, Gather, Totals};
use crate::sidecar::{Feat, Sidecar};

fn dtype(f: &Feat) -> Result<DType, String> {
    match f.dtype.as_str() {
        "int64" => Ok(DType::Int64),
        "float32" => Ok(DType::Float),
        "string" => Ok(DType::Bytes),
        o => Err(format!("unknown dtype {o}")),
    }
}

fn to_spec(feats: &BTreeMap<String, Feat>) -> Result<Spec, String> {
    let mut spec = Spec::new();
    for (k, f) in feats {
        let fs = match f.kind.as_str() {
            "fixed" => FeatureSpec::fixed_len(dtype(f)?, f.shape.clone()),
            "varlen" => FeatureSpec::var_len(dtype(f)?),
            "fixed_seq" => FeatureSpec::fixed_len_sequence(dtype(f)?, f.shape.clone(), false),
            o => return Err(format!("{k}: unknown kind {o}")),
        };
        spec.insert(k.clone(), fs);
    }
    Ok(spec)
}

/// A compiled parser for the sidecar's spec.
#[derive(Clone)]
enum Compiled {
    /// `tf.train.Example` records.
    Example(ExampleParser),
    /// `tf.train.SequenceExample` records.
    Sequence(SequenceExampleParser),
}

/// The sidecar's spec compiled, and the tensor buffers of the sinks that have finished with
/// it, for the next sinks to take: as a pipeline's workers keep theirs from one batch to the
/// next and from one file to the next.
pub(crate) struct SpecParser {
    compiled: Compiled,
    spare: Arc<Mutex<Vec<Buffers>>>,
}

impl SpecParser {
    /// Compiles the sidecar's spec.
    pub(crate) fn new(sc: &Sidecar) -> Result<Self, String> {
        let compiled = if sc.is_sequence() {
            let ctx = to_spec(&sc.context_features)?;
            let lists = to_spec(&sc.sequence_features)?;
            SequenceExampleParser::new(&ctx, &lists).map(Compiled::Sequence)
        } else {
            ExampleParser::new(&to_spec(&sc.features)?).map(Compiled::Example)
        };
        Ok(SpecParser {
            compiled: compiled.map_err(|e| e.to_string())?,
            spare: Arc::default(),
        })
    }
}

/// Values a batch of tensors holds, without padding: dense and sparse values, and for
/// feature lists parsed as `FixedLenSequence` (padded to the longest sequence) the real step
/// counts from the lengths tensors.
fn count(t: &Tensors, padded: &BTreeMap<String, Tensor>) -> u64 {
    t.iter()
        .map(|(k, t)| match padded.get(k) {
            Some(Tensor::Dense { values, .. }) => values.as_i64().map_or(0, |l| {
                l.iter().map(|&n| u64::try_from(n).unwrap_or(0)).sum()
            }),
            _ => t.values().len() as u64,
        })
        .sum()
}

/// Parses each batch with the spec parser; counts rows and values, and gives the tensors'
/// buffers back for the next batch, as a pipeline that has consumed a batch would.
pub(crate) struct SpecSink {
    parser: Compiled,
    buffers: Buffers,
    /// Where the buffers go when the sink is dropped.
    spare: Arc<Mutex<Vec<Buffers>>>,
    totals: Totals,
    /// Records of chunks gathered into batches.
    gather: Gather,
}

impl SpecSink {
    /// A sink with its own copy of the compiled parser, and the buffers of a finished sink.
    pub(crate) fn new(parser: &SpecParser) -> Self {
        let spare = parser
            .spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        SpecSink {
            parser: parser.compiled.clone(),
            buffers: spare.unwrap_or_default(),
            spare: Arc::clone(&parser.spare),
            totals: Totals::default(),
            gather: Gather::default(),
        }
    }
}

impl SpecSink {
    fn parse<R: AsRef<[u8]>>(
        parser: &Compiled,
        buffers: &mut Buffers,
        totals: &mut Totals,
        recs: &[R],
    ) -> Result<(), String> {
        let values = match parser {
            Compiled::Example(p) => {
                let t = p.parse_reusing(recs, buffers).map_err(|e| e.to_string())?;
                let v = count(&t, &BTreeMap::new());
                buffers.give_back(std::hint::black_box(t));
                v
            }
            Compiled::Sequence(p) => {
                let (ctx, lists, lengths) =
                    p.parse_reusing(recs, buffers).map_err(|e| e.to_string())?;
                let v = count(&ctx, &BTreeMap::new()) + count(&lists, &lengths);
                let (ctx, lists, lengths) = std::hint::black_box((ctx, lists, lengths));
                buffers.give_back(ctx);
                buffers.give_back(lists);
                buffers.give_back(lengths);
                v
            }
        };
        totals.rows += recs.len() as u64;
        totals.values += values;
        Ok(())
    }
}

impl BatchSink for SpecSink {
    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String> {
        Self::parse(&self.parser, &mut self.buffers, &mut self.totals, recs)
    }
    fn chunk(&mut self, chunk: &Chunk) -> Result<u64, String> {
        let (parser, buffers, totals) = (&self.parser, &mut self.buffers, &mut self.totals);
        self.gather
            .chunk(chunk, |recs| Self::parse(parser, buffers, totals, recs))
    }
    fn finish(&mut self) -> Result<(), String> {
        let (parser, buffers, totals) = (&self.parser, &mut self.buffers, &mut self.totals);
        self.gather
            .finish(|recs| Self::parse(parser, buffers, totals, recs))
    }
    fn totals(&self) -> Totals {
        self.totals
    }
}

impl Drop for SpecSink {
    fn drop(&mut self) {
        let buffers = std::mem::take(&mut self.buffers);
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buffers);
    }
}
