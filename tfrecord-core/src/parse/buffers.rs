//! Buffers of tensors a caller is done with, filled again by the next batch.

use super::dtype::DType;
use super::strings::ByteStrings;
use super::tensor::{Tensor, Tensors, Values};

/// The most buffers of one element type kept; past it the smallest is dropped.
const KEEP: usize = 64;

/// The buffers of tensors a caller has finished with, for the parser to build the next
/// batch's tensors in instead of allocating new ones.
///
/// A batch's output buffers are large (a batch of 1024 `SequenceExample`s with a few hundred
/// values each parses into megabytes). Allocated afresh for every batch and freed after it,
/// they go back to the operating system and come back as new pages, which the CPU then has
/// to fault in and zero, on every batch: give them back here and they are reused.
///
/// ```
/// use tfrecord_core::parse::{Buffers, DType, ExampleParser, FeatureSpec, Spec};
/// # fn batches() -> Vec<Vec<Vec<u8>>> { vec![] }
///
/// let mut spec = Spec::new();
/// spec.insert("ids".into(), FeatureSpec::var_len(DType::Int64));
/// let parser = ExampleParser::new(&spec)?;
/// let mut buffers = Buffers::new();
/// for batch in batches() {
///     let tensors = parser.parse_reusing(&batch, &mut buffers)?;
///     // ... use the tensors ...
///     buffers.give_back(tensors);
/// }
/// # Ok::<(), tfrecord_core::Error>(())
/// ```
///
/// Each buffer the parser asks for is, where it can be, the one it was handed at the same point
/// of the batch before (the same key and role), so that a batch of another size, such as a
/// file's last, shorter one, does not shuffle the buffers between keys and leave some of them
/// to grow. It holds at most 64 buffers of each element type (the largest ones), so giving back
/// more batches than are parsed does not grow it without bound.
#[derive(Debug, Default)]
pub struct Buffers {
    i64s: Vec<Vec<i64>>,
    f32s: Vec<Vec<f32>>,
    strings: Vec<ByteStrings>,
    usizes: Vec<Vec<usize>>,
    /// The address of the buffer handed out at each request of the last batch, in order (0
    /// for none).
    last: Vec<usize>,
    /// The same for the batch being parsed.
    now: Vec<usize>,
}

/// A buffer the pool keeps.
trait Pooled: Default {
    /// How much it holds without growing (its bytes, for strings).
    fn room(&self) -> usize;
    /// Where its allocation is, 0 for none: what identifies it from one batch to the next.
    fn addr(&self) -> usize;
    /// Drops its contents, keeping the allocation.
    fn empty(&mut self);
}

impl<T> Pooled for Vec<T> {
    fn room(&self) -> usize {
        self.capacity()
    }
    fn addr(&self) -> usize {
        if self.capacity() == 0 {
            0
        } else {
            self.as_ptr().addr()
        }
    }
    fn empty(&mut self) {
        self.clear();
    }
}

impl Pooled for ByteStrings {
    fn room(&self) -> usize {
        self.data_capacity()
    }
    fn addr(&self) -> usize {
        if self.capacity() == 0 {
            0
        } else {
            self.ends().as_ptr().addr()
        }
    }
    fn empty(&mut self) {
        self.clear();
    }
}

/// Keeps `v`, emptied, unless it has no allocation; past [`KEEP`] the smallest goes.
fn keep<T: Pooled>(pool: &mut Vec<T>, mut v: T) {
    if v.addr() == 0 {
        return;
    }
    v.empty();
    pool.push(v);
    if pool.len() > KEEP
        && let Some(i) = (0..pool.len()).min_by_key(|&i| pool.get(i).map_or(0, T::room))
    {
        pool.swap_remove(i);
    }
}

/// A kept buffer: the one at address `was` if it is kept, else the smallest that `fits`, else
/// the largest (to be grown), else a new one.
fn take<T: Pooled>(pool: &mut Vec<T>, was: usize, fits: impl Fn(&T) -> bool) -> T {
    let same = (was != 0)
        .then(|| pool.iter().position(|v| v.addr() == was))
        .flatten();
    let pick = same.or_else(|| {
        let fitting = (0..pool.len())
            .filter(|&i| pool.get(i).is_some_and(&fits))
            .min_by_key(|&i| pool.get(i).map_or(0, T::room));
        fitting.or_else(|| (0..pool.len()).max_by_key(|&i| pool.get(i).map_or(0, T::room)))
    });
    pick.map_or_else(T::default, |i| pool.swap_remove(i))
}

/// [`take`] of a `Vec` with room for `n` elements.
fn take_vec<T>(pool: &mut Vec<Vec<T>>, was: usize, n: usize) -> Vec<T> {
    take(pool, was, |v| v.capacity() >= n)
}

impl Buffers {
    /// No buffers: the first batch parsed with it allocates as [`parse`] does.
    ///
    /// [`parse`]: super::ExampleParser::parse
    pub fn new() -> Self {
        Buffers::default()
    }

    /// Starts a batch: its requests are matched with the last batch's.
    pub(crate) fn begin(&mut self) {
        std::mem::swap(&mut self.last, &mut self.now);
        self.now.clear();
    }

    /// The address handed out at this request of the last batch.
    fn was(&self) -> usize {
        self.last.get(self.now.len()).copied().unwrap_or(0)
    }

    /// Takes the buffers of a batch's tensors, for the next batch parsed with `self`.
    pub fn give_back(&mut self, tensors: Tensors) {
        for t in tensors.into_values() {
            self.give_back_tensor(t);
        }
    }

    /// Takes the buffers of one tensor.
    pub fn give_back_tensor(&mut self, tensor: Tensor) {
        match tensor {
            Tensor::Dense { values, .. } => self.keep_values(values),
            Tensor::Sparse {
                indices, values, ..
            } => {
                self.keep_i64s(indices);
                self.keep_values(values);
            }
            Tensor::Ragged {
                flat_values,
                nested_row_splits,
            } => {
                self.keep_values(flat_values);
                for s in nested_row_splits {
                    self.keep_i64s(s);
                }
            }
        }
    }

    /// Keeps the buffer of `values` (only the element types a parser outputs).
    pub(crate) fn keep_values(&mut self, values: Values) {
        match values {
            Values::Int64(v) => keep(&mut self.i64s, v),
            Values::Float32(v) => keep(&mut self.f32s, v),
            Values::Bytes(v) => keep(&mut self.strings, v),
            Values::Bool(_) | Values::Int32(_) | Values::Float64(_) => {}
        }
    }

    pub(crate) fn keep_i64s(&mut self, v: Vec<i64>) {
        keep(&mut self.i64s, v);
    }

    pub(crate) fn keep_usizes(&mut self, v: Vec<usize>) {
        keep(&mut self.usizes, v);
    }

    /// An empty buffer of `dtype` with room for `n` values and, for strings, `bytes` bytes, as
    /// far as it can be had (a reservation that fails is skipped: the buffer grows as it
    /// fills).
    pub(crate) fn values(&mut self, dtype: DType, n: usize, bytes: usize) -> Values {
        let was = self.was();
        let mut v = match dtype {
            DType::Int64 => Values::Int64(take_vec(&mut self.i64s, was, n)),
            DType::Float => Values::Float32(take_vec(&mut self.f32s, was, n)),
            DType::Bytes => Values::Bytes(take(&mut self.strings, was, |s| {
                s.capacity() >= n && s.data_capacity() >= bytes
            })),
            _ => Values::empty(dtype),
        };
        v.reserve_hint(n, bytes);
        self.now.push(match &v {
            Values::Int64(v) => v.addr(),
            Values::Float32(v) => v.addr(),
            Values::Bytes(v) => v.addr(),
            _ => 0,
        });
        v
    }

    /// An empty `Vec<i64>` with room for `n`, as far as it can be had.
    pub(crate) fn i64s(&mut self, n: usize) -> Vec<i64> {
        let was = self.was();
        let mut v = take_vec(&mut self.i64s, was, n);
        let _ = v.try_reserve(n);
        self.now.push(v.addr());
        v
    }

    /// An empty `Vec<usize>` with room for `n`, as far as it can be had.
    pub(crate) fn usizes(&mut self, n: usize) -> Vec<usize> {
        let was = self.was();
        let mut v = take_vec(&mut self.usizes, was, n);
        let _ = v.try_reserve(n);
        self.now.push(v.addr());
        v
    }
}
