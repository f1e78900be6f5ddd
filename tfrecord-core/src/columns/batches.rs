//! A derived type's records read as columnar batches: `Reader::<T>::batches(n)`.

use std::io::Read;
use std::marker::PhantomData;

use super::{ColumnBatch, ColumnDecoder};
use crate::codec::Container;
use crate::compression::Format;
use crate::described::RecordSchema;
use crate::error::{Error, Result};
use crate::parse::RecordSpec;
use crate::typed::Reader;

/// The spec of a derived record type's columns: its [`RecordSchema`] without its `skip` fields
/// (which records do not hold).
///
/// # Errors
/// A field that has no column, named: a flattened struct, or a field whose type has no spec
/// type (a user enum): its values would be missing from every batch.
pub fn columnar_record<T: RecordSchema>() -> Result<tfrecord_schema::ir::Record> {
    let mut record = T::record_schema();
    record.fields.retain(|f| !f.skip);
    if let Some(f) = record
        .fields
        .iter()
        .find(|f| f.flatten || f.dtype.is_none())
    {
        let what = if f.flatten {
            "a flattened struct"
        } else {
            "its type (a user enum, or another type only the compiler knows) has no spec type"
        };
        return Err(Error::feature(format!(
            "field `{}::{}` has no column ({what}), and its values would be missing from every \
             batch: read `{}` as values (`Reader::<{}>`), or describe the records with a spec \
             file",
            record.name, f.member, record.name, record.name
        ))
        .with_key(f.key.clone()));
    }
    Ok(record)
}

impl ColumnDecoder {
    /// The decoder of a derived record type's columns, for records in `format`'s message: one
    /// column per field of [`columnar_record`], in field order.
    ///
    /// # Errors
    /// A field the columnar layout cannot hold (see [`columnar_record`]); the error names it.
    pub fn for_type<T: RecordSchema>(format: Format) -> Result<Self> {
        ColumnDecoder::new(&RecordSpec::from_record(&columnar_record::<T>()?)?, format)
    }
}

impl<T: RecordSchema, C: Container, R: Read> Reader<T, C, R> {
    /// The records as columnar batches of up to `n` records each (the last one shorter): one
    /// column per field of `T` (see [`ColumnDecoder::for_type`]), each a flat buffer of values
    /// under its levels of nesting, as Arrow lays them out, with no allocation per record.
    ///
    /// ```
    /// use tfrecord_core::columns::Leaf;
    /// use tfrecord_core::{Example, Reader, Writer};
    ///
    /// #[derive(Example)]
    /// struct Point {
    ///     x: i64,
    ///     tags: Vec<String>,
    /// }
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("points.tfrecord");
    /// let mut w = Writer::<Point>::create(&path)?;
    /// for x in 0..2500 {
    ///     w.write(&Point { x, tags: vec!["a".into()] })?;
    /// }
    /// w.finish()?;
    ///
    /// let mut rows = 0;
    /// for batch in Reader::<Point>::open(&path)?.batches(1024)? {
    ///     let batch = batch?;
    ///     let Leaf::Int64(x) = &batch.columns[0].leaf else { unreachable!() };
    ///     assert_eq!(x.len(), batch.rows);
    ///     rows += batch.rows;
    /// }
    /// assert_eq!(rows, 2500);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Records that do not decode are skipped as by the iterator under a
    /// [`BadRecords`](crate::BadRecords) policy that skips damage (each reported, a batch
    /// filled on past them); else the first ends the batches with its error, which names its
    /// file, offset, record and key.
    ///
    /// # Errors
    /// A field the columnar layout cannot hold.
    pub fn batches(self, n: usize) -> Result<Batches<T, C, R>> {
        Ok(Batches {
            decoder: ColumnDecoder::for_type::<T>(C::FORMAT)?,
            reader: self,
            size: n.max(1),
            scratch: Vec::new(),
            done: false,
            record: PhantomData,
        })
    }
}

/// The columnar batches of a [`Reader`]: see [`Reader::batches`].
pub struct Batches<T, C: Container, R: Read> {
    reader: Reader<T, C, R>,
    decoder: ColumnDecoder,
    size: usize,
    /// Where a record that is not lent whole out of the read buffer is copied.
    scratch: Vec<u8>,
    done: bool,
    record: PhantomData<fn() -> T>,
}

impl<T, C: Container, R: Read> Batches<T, C, R> {
    /// The decoder's columns, in order.
    pub fn layouts(&self) -> &[super::ColumnLayout] {
        self.decoder.layouts()
    }

    /// The underlying record reader: what the [`BadRecords`](crate::BadRecords) policy skipped
    /// ([`drain_skipped`](crate::RecordReader::drain_skipped),
    /// [`skip_summary`](crate::RecordReader::skip_summary)), as for [`Reader::records`].
    pub fn records(&mut self) -> &mut crate::RecordReader<R> {
        self.reader.records()
    }

    fn next_batch(&mut self) -> Result<Option<ColumnBatch>> {
        let records = self.reader.records();
        let mut batch = self.decoder.start(self.size);
        let mut n = 0;
        while n < self.size {
            // Each record decoded where the reader holds it: no copy of its own.
            let Some(record) = records.read_located(&mut self.scratch)? else {
                self.done = true;
                break;
            };
            // Where it is: its index among the records read (those skipped under the policy
            // included) and its offset.
            let (index, offset) = (record.index, record.offset);
            if let Err(e) = batch.push(record.payload, index) {
                // Skipped (and reported) under a policy that skips damage, as the typed
                // iterator skips it, the batch holding the records before it; else the error,
                // located.
                records
                    .skip_last(e)
                    .map_err(|e| records.locate(e, offset, index))?;
                continue;
            }
            n += 1;
        }
        Ok((n > 0).then(|| batch.finish()))
    }
}

impl<T, C: Container, R: Read> Iterator for Batches<T, C, R> {
    type Item = Result<ColumnBatch>;

    fn next(&mut self) -> Option<Result<ColumnBatch>> {
        if self.done {
            return None;
        }
        match self.next_batch() {
            Ok(b) => b.map(Ok),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<T, C: Container, R: Read> std::fmt::Debug for Batches<T, C, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("size", &self.size)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
