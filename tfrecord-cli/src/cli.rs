//! The command-line surface: clap definitions of every subcommand and its flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tfrecord_core::{Compression, Format};

use crate::dataset::DatasetArgs;

/// Read, check and write TensorFlow TFRecord and OneFlow OFRecord files.
///
/// File arguments are paths; `-` means standard input (or standard output for `-o`). A
/// directory given as an input stands for its OneFlow / Spark `part-*` files in name order (other
/// record files beside them are an error), or else its TensorFlow shards
/// (`train-00000-of-00004.tfrecord`) and record files; a quoted glob
/// pattern for its matches. Commands that read record files take `--limit`, `--skip`,
/// `--shard I/N`, `--shuffle --seed S`, `--max-bad-records N` and `--resync`; `from-parquet`
/// takes `--limit`, `--skip` and `--shard I/N` over rows (a Parquet file has no damaged records
/// to pass over, and its rows are written in order). Compression is chosen by `--compression`, else from the file name
/// (`.gz` gzip, `.zlib` / `.zz` zlib), else none; standard input and output are uncompressed
/// unless `--compression` says otherwise. Errors go to standard error as
/// `tfrecord: error: <message>` and name the file, the byte offset (in the decompressed stream),
/// the record index and, where it applies, the feature key; the exit status is then 1 (2 for a
/// misused command line).
#[derive(Debug, Parser)]
#[command(name = "tfrecord", version, about, long_about)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Print every record, as protobuf text format (default) or as JSON Lines.
    ///
    /// The default output is the protobuf text format exactly as protobuf's
    /// `text_format.MessageToString(example, as_utf8=True)` writes a record: two-space
    /// indents, features sorted by key, bytes C-escaped, floats in Python's shortest form
    /// (`100.0`). That is what `print(example)` shows with protobuf's pure-Python
    /// implementation; its default upb implementation prints map entries in the order they
    /// were stored and floats in C's shortest form (`100`). Like a Python loop of `print` calls,
    /// every record's text is followed by one blank line, so records are separated by blank
    /// lines.
    ///
    /// With `--json` each record is one line holding the canonical proto3 JSON mapping of the
    /// message (the value protobuf's `json_format.MessageToJson` gives, written compactly on
    /// one line): lowerCamelCase field names, int64 as decimal strings, bytes as base64, floats
    /// as Python's `repr` writes them (`1e-05`, `1e+16`), map keys sorted.
    Cat(CatArgs),
    /// Print the number of records.
    ///
    /// The last line of the output is the total, a single integer. With more than one input
    /// file, one `<file>\t<count>` line per file comes before it, unless a data set flag
    /// (--limit, --skip, --shard, --shuffle, --max-bad-records, --resync) is given: then the
    /// output is the total of the records the flags select, alone.
    Count(CountArgs),
    /// Check the framing and both CRC32C checksums of every record of every file.
    ///
    /// Prints `<file>\tOK\t<n> records` or `<file>\tFAILED` per file, with the error (file,
    /// byte offset, record index) on standard error, and goes on with the next file after a
    /// failing one. Exits 0 only when every file is intact, or with --max-bad-records /
    /// --resync, when the damage is within the budget (one budget over all files): a file whose
    /// damage was skipped is `<file>\tDAMAGED\t<n> records, <k> damaged record(s) or byte
    /// range(s) skipped`, each skip reported on standard error. With --limit, --skip, --shard
    /// or --shuffle the records checked are chosen over all inputs together, as for `cat`; each
    /// file's line counts the chosen records it holds, and an error ends the check (the line of
    /// the file it is in says FAILED). With several files a last line sums them up: `all <N>
    /// files intact`, `<K> of <N> files FAILED` or `<K> of <N> files DAMAGED, the damage
    /// skipped within the budget`. OFRecord has no checksums: with `--input-format ofrecord`
    /// only the framing is checked.
    Verify(VerifyArgs),
    /// Write JSON Lines to a record file.
    ///
    /// Each non-blank input line is the canonical proto3 JSON of one record: a
    /// `tensorflow.Example`, a `tensorflow.SequenceExample` with `--sequence`, or a
    /// `oneflow.OFRecord` with `--output-format ofrecord` (as `json_format.Parse` accepts it:
    /// lowerCamelCase or snake_case names, int64 as strings or numbers, bytes as base64). Blank
    /// lines are skipped; a line may be at most 1 GiB long. Errors name the input file, the
    /// 1-based line number and the byte offset it starts at, the index in the output of the
    /// record that line would have become, and the JSON field.
    FromJson(FromJsonArgs),
    /// Re-encode records between containers and compressions.
    ///
    /// When both sides have the same container, records are copied byte for byte without
    /// decoding. TFRecord to OFRecord converts each `tf.train.Example` feature kind to kind;
    /// OFRecord to TFRecord widens int32 lists to int64 and narrows double lists to float only
    /// with `--allow-lossy-double`. `--compression` applies to the output; the inputs'
    /// compression comes from their names or `--input-compression`. Every input is read into the
    /// one output, in order. A file output is written beside its final name and renamed into
    /// place only when everything succeeded, so an error never leaves a partial file (and the
    /// output may be one of the inputs).
    Convert(ConvertArgs),
    /// Generate Rust code from TOML feature specs, as `tfrecord_schema::Builder` does in
    /// build.rs.
    ///
    /// Each `NAME.toml` becomes `DIR/NAME.rs`, holding one `#[derive(Example)]` struct per
    /// record; a file is only written when its contents change. With `--check` nothing is
    /// written: the command fails, naming every missing or stale file, unless the files in DIR
    /// are exactly what it would generate (for generated code checked into a repository).
    /// Errors in a spec are printed rustc-style, all of them, with file, line and column.
    Gen(GenArgs),
    /// Decode records into tensors with a TOML spec's features, exactly as
    /// `tf.io.parse_example` (or `tf.io.parse_sequence_example`) does.
    ///
    /// The spec is the TOML format of `gen`; its record (`--record`, or the spec's only record)
    /// is translated into TensorFlow's feature types (`FixedLenFeature`, `VarLenFeature`,
    /// `SparseFeature`, `RaggedFeature`, `FixedLenSequenceFeature`), each output named by its
    /// table key in the spec. A feature marked `optional` is read as a `VarLenFeature`.
    ///
    /// The records of all inputs, in order, are cut into batches of `--batch-size` records
    /// (the last batch may be shorter), as `tf.data.TFRecordDataset(files).batch(N)` would, so
    /// that memory does not grow with the input: it is a few times a batch's records, the
    /// parsed tensors (8 bytes a number, and a sparse tensor's indices 8 bytes a dimension for
    /// each value: up to some 40 times a record's bytes for lists of one-byte integers; the
    /// JSON line is written as it is made, not held); give a smaller `--batch-size` for large
    /// records; with `--one-batch` all records form one batch, as one
    /// `tf.io.parse_example` call over them (memory grows with the input). Each batch prints
    /// one line: a JSON object mapping output name to tensor
    /// (`{"dense": {"shape", "values"}}`, `{"sparse": {"indices", "values", "dense_shape"}}` or
    /// `{"ragged": {"flat_values", "nested_row_splits"}}`). For a `sequence_example` record the
    /// line is `{"context": {..}, "sequence": {..}, "lengths": {..}}`: the three results of
    /// `tf.io.parse_sequence_example`, `lengths` holding a `[batch]` int64 tensor per
    /// `sequence` (FixedLenSequenceFeature) feature list. No records, no output. Errors name the
    /// file, the record index within it and the feature key.
    ///
    /// Where it differs from TensorFlow: a record with `deny_unknown_keys` refuses a feature
    /// the spec does not read (TensorFlow passes over it); a `uniform_row_length` partition
    /// is one more level of `nested_row_splits` (TensorFlow folds the innermost one into the
    /// shape of `flat_values`; the values, read as nested lists, are the same); value row ids
    /// may describe at most 8 rows per input byte plus 65,536 per batch (an error beyond, where
    /// TensorFlow would allocate them); records in a protobuf encoding other than the
    /// canonical one TensorFlow's writers use (a packed list split into several runs, a list
    /// message given twice) are read as protobuf merges them, where TensorFlow's fast parser
    /// may keep only a part or fail (`tfrecord_core::parse` says which); a sparse feature's
    /// values under one repeated index keep their order in the record, where TensorFlow's
    /// sort, which is not stable, may reorder them once a batch holds more than 16 entries.
    /// JSON has one NaN: every NaN
    /// prints as `"NaN"`, its sign and payload not kept (`to-parquet` keeps the bits).
    Parse(ParseArgs),
    /// Write records to a Parquet file, one row per record and one column per feature.
    ///
    /// Columns follow the `tfrecord-arrow` type mapping: int64 -> Int64, float -> Float32,
    /// bytes -> Binary, string -> Utf8 (invalid UTF-8 is an error naming key and record), a
    /// fixed shape `[k]` -> `FixedSizeList(k)` (nested for higher ranks), var -> List, a sequence
    /// -> List of its rows, sparse -> List of structs (indices..., value), ragged -> nested
    /// List, a feature list -> List per row; an absent feature without a default is null.
    /// Without `--spec`, the spec is inferred from the inputs first (as `tfrecord infer` does,
    /// a first pass over them). The spec is stored in the file's metadata (`tfrecord.spec`), so
    /// that `from-parquet` writes the records back exactly. The file is written under a
    /// temporary name and renamed into place when complete.
    ToParquet(ToParquetArgs),
    /// Write the rows of Parquet files as records (the inverse of `to-parquet`).
    ///
    /// The spec is the one `to-parquet` stored in the file's metadata, else `--spec`, else one
    /// read off the column types: a value is a fixed scalar (optional when the column is
    /// nullable), nested fixed-size lists a fixed shape, a list `var`, a list of fixed-size
    /// lists a `sequence`. A null row leaves its feature out of the record. Float64 columns go
    /// to a `tf.train.Example` as float lists only with `--allow-lossy-double` (OFRecord has
    /// double lists).
    FromParquet(FromParquetArgs),
    /// Scan records and print a TOML spec that describes them.
    ///
    /// Per key: the dtype from the list kind (`bytes_list` is `string` when every value is
    /// UTF-8, else `bytes`), `fixed` with its shape when every record that has the key holds the
    /// same number of values (else `var`), `optional` when some records lack a fixed feature;
    /// with `--sequence`, context features and feature lists (`sequence` with a shape per step
    /// when every step holds the same number of values, else `var`; `allow_missing` when some
    /// records lack the list). Keys that cannot be described (no value type, conflicting types,
    /// an empty key) are left out and listed in the header. The output reads back with `gen`,
    /// whose type decodes the scanned records, and with `parse --spec`.
    Infer(InferArgs),
    /// Convert Avro files to records (one `tf.train.Example` per Avro record), or print their
    /// batched tensors with `--tensors`, using a TOML spec whose features name Avro key
    /// expressions (`source = "friends[*].name.first"`).
    ///
    /// Key expressions: `name.first` (record fields), `friends[2]` (an array element),
    /// `friends[*]` (every element; adds a dimension), `cars['nickname']` (a map value; a
    /// quote in the key written twice, `['it''s']`),
    /// `friends[gender='unknown']` and `friends[name.first=@name.first]` (filters; `@` starts at
    /// the record's root; adds a dimension), `multi:int` (a union branch). Avro types map
    /// strictly: boolean to bool, int to int32, long to int64, float to float, double to double,
    /// string / bytes / enum (its symbol) / fixed to string or bytes; a null takes the
    /// feature's default, else it is an error, but a null array or map under `[*]` or a
    /// filter has no elements (a `var` feature gets none for it). `fixed` features fill missing positions from
    /// their default (a scalar, or a tensor of the whole shape); `var` features are sparse with
    /// one dimension per `[*]` or filter; `sparse` features read their `index_key`s and
    /// `value_key` relative to the source's elements (or from the root with `@`).
    ///
    /// In the records written, a fixed or var feature is stored under its name, a sparse
    /// feature as its index and value keys, so `parse --spec` with the same spec reads them back
    /// (a spec `parse` refuses is refused here too). A var feature whose source has several
    /// `[*]` or filters is stored as one flat list, its values in traversal order, with a
    /// warning: the nesting `--tensors` shows is not kept. Errors name the file, the record
    /// index and the feature. An existing output file is refused without `--force`.
    FromAvro(FromAvroArgs),
    /// Convert JSON Lines or CSV records to records, one `tf.train.Example` each.
    ///
    /// Type mapping: integers to int64, floats to float, strings to bytes, booleans to int64
    /// 0 / 1, arrays to lists (nested arrays row-major), nested objects to `parent/child` keys,
    /// null and empty CSV cells to no feature. A field's kind is decided over the whole input
    /// (integers mixed with floats are floats); a CSV column is int64, float or bool when every
    /// non-empty cell is one, else bytes. `--spec` forces dtypes, shapes and defaults. Anything
    /// unmappable (a list of objects, strings mixed with numbers, ...) is an error naming the
    /// record and the field, or skipped with a warning with `--skip-unmappable`. An existing
    /// output file is refused without `--force`.
    FromRecords(FromRecordsArgs),
    /// Write one record per image of a folder: `image/encoded` (the file's bytes),
    /// `image/format`, `image/filename`, `height`, `width`, `depth` (from the header; no pixel
    /// is decoded), and `label` / `label/text` from the class sub-folder (`DIR/<class>/*.jpg`,
    /// classes numbered in name order).
    ///
    /// Images are shuffled with `--seed` (default 0; `--no-shuffle` keeps name order) and can
    /// be split into `--shards N` files named `prefix-00000-of-0000N.tfrecord`. With
    /// `--output-format ofrecord`, OUT is a directory of OneFlow `part-00000` files. Existing
    /// outputs are refused without `--force`; missing directories are made.
    FromImages(FromImagesArgs),
    /// Write the index of each record file: one `offset size` line per record, the text format
    /// of DALI's `tfrecord2idx` and the PyPI `tfrecord` package.
    ///
    /// `offset` is the byte offset of the record's frame in the file and `size` the size of the
    /// whole frame (header, payload and footer), in decimal, one space between them. Each
    /// input's index goes to `IN.idx` (its name with `.idx` added), or with `-o` to OUT, which
    /// takes one input. Every frame and both checksums are verified: a damaged file is not
    /// indexed, and no index file is left for it (to standard output, the lines of the records
    /// before the damage are written before the error). Compressed files have no offsets to
    /// index: decompress them first. With `--input-format ofrecord` the frames are OneFlow's
    /// (an 8-byte length, then the payload; no checksum to verify, so a frame is checked only
    /// for fitting in the file): the same lines, which neither DALI nor the PyPI package reads.
    Index(IndexArgs),
}

/// A container format as a command-line value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// TensorFlow TFRecord framing (length, CRCs).
    Tfrecord,
    /// OneFlow OFRecord framing (int64 length, no checksum).
    Ofrecord,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Tfrecord => Format::TfRecord,
            FormatArg::Ofrecord => Format::OfRecord,
        }
    }
}

/// A stream compression as a command-line value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompressionArg {
    /// No compression.
    None,
    /// A gzip stream over the whole file (TensorFlow's GZIP).
    #[value(alias = "gz")]
    Gzip,
    /// A zlib stream over the whole file (TensorFlow's ZLIB).
    Zlib,
}

impl From<CompressionArg> for Compression {
    fn from(c: CompressionArg) -> Self {
        match c {
            CompressionArg::None => Compression::None,
            CompressionArg::Gzip => Compression::Gzip,
            CompressionArg::Zlib => Compression::Zlib,
        }
    }
}

/// How the inputs of a reading command are read.
#[derive(Debug, Args)]
pub(crate) struct ReadOpts {
    /// Container format of the inputs.
    #[arg(long, value_enum, ignore_case = true, default_value = "tfrecord")]
    pub(crate) input_format: FormatArg,
    /// Compression of the inputs [default: from each file name; none for `-`].
    #[arg(long, value_enum, ignore_case = true, alias = "input-compression")]
    pub(crate) compression: Option<CompressionArg>,
    /// The longest record read, in bytes: a longer declared length is an error (or, with
    /// --resync, damage, scanned past to the next sound frame), so that a damaged length never
    /// drives a huge allocation. TensorFlow has no such limit: raise it for files of larger
    /// records (above all when their payloads hold TFRecord frames, which a scan would take
    /// for records).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    pub(crate) max_record_len: u64,
}

/// Flags of `cat`.
#[derive(Debug, Args)]
pub(crate) struct CatArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// Print one JSON line per record (canonical proto3 JSON) instead of text format. A
    /// feature key that is not UTF-8 is written escaped as in the text format (`\377`), with a
    /// warning: JSON cannot carry its bytes.
    #[arg(long)]
    pub(crate) json: bool,
    /// Decode records as `tensorflow.SequenceExample` instead of `tensorflow.Example`.
    #[arg(long)]
    pub(crate) sequence: bool,
    /// Skip checking each record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit, skip, shard, shuffle, damaged records.
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// Flags of `count`.
#[derive(Debug, Args)]
pub(crate) struct CountArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// Skip checking each record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Threads that read each file.
    #[command(flatten)]
    pub(crate) threads: Threads,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit, skip, shard, shuffle, damaged records (then read in order on one thread).
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// How many threads read each file of `count` and `verify`.
#[derive(Clone, Copy, Debug, Args)]
pub(crate) struct Threads {
    /// Threads that read and check each file, taking chunks of about 1 MiB in turn: 0 for one
    /// per core, at most 8 (each thread holds about 1 MiB), 1 to read in order on one thread,
    /// up to 64. Standard input is read on one thread. The output and the error reported are
    /// the same for any number.
    #[arg(
        long = "threads",
        value_name = "N",
        default_value_t = 0,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=64)
    )]
    n: usize,
}

impl Threads {
    /// The most threads `--threads 0` starts: reading is bound by memory bandwidth well
    /// before that, and each thread holds its chunks.
    const MAX_DEFAULT: usize = 8;

    /// The number of threads to read each file with.
    pub(crate) fn get(self) -> usize {
        // Asked once: the answer reads the process's cgroup files, at a cost that thousands
        // of small files would pay over and over.
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        match self.n {
            0 => *CORES.get_or_init(|| {
                std::thread::available_parallelism()
                    .map_or(1, std::num::NonZeroUsize::get)
                    .min(Self::MAX_DEFAULT)
            }),
            n => n,
        }
    }
}

/// Flags of `verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// Also decode every payload as a protobuf message (`tensorflow.Example`, or as chosen by
    /// `--sequence` / `--input-format ofrecord`).
    #[arg(long)]
    pub(crate) decode: bool,
    /// With `--decode`, decode payloads as `tensorflow.SequenceExample`.
    #[arg(long)]
    pub(crate) sequence: bool,
    /// Threads that read each file.
    #[command(flatten)]
    pub(crate) threads: Threads,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit, skip, shard, shuffle (over all inputs), damaged records (then read on one
    /// thread).
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// How the output of a writing command is written.
#[derive(Debug, Args)]
pub(crate) struct WriteOpts {
    /// Output file, or `-` for standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: PathBuf,
    /// Format, compression and level.
    #[command(flatten)]
    pub(crate) encoding: Encoding,
}

/// How a writing command encodes its output (every writing command takes these flags).
#[derive(Clone, Copy, Debug, Args)]
pub(crate) struct Encoding {
    /// Container format of the output.
    #[arg(long, value_enum, ignore_case = true, default_value = "tfrecord")]
    pub(crate) output_format: FormatArg,
    /// Compression of the output [default: from the output file name; none for `-` and for
    /// OFRecord `part-*` directories].
    #[arg(long, value_enum, ignore_case = true, alias = "output-compression")]
    pub(crate) compression: Option<CompressionArg>,
    /// Compression level for gzip and zlib output, 0 (store) to 9 (smallest).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=9))]
    pub(crate) level: u32,
}

/// The sharded output of `convert` and `from-parquet`.
#[derive(Clone, Copy, Debug, Args)]
pub(crate) struct ShardOpts {
    /// Write N shards instead of one file, records dealt to them in turn, named as TensorFlow
    /// names shards: `train.tfrecord` becomes `train-00000-of-00004.tfrecord` and so on (the
    /// suffix of OUT kept after the shard number). With `--output-format ofrecord` and a
    /// directory as OUT (an existing one, or a name ending with `/`), OneFlow's `part-00000`,
    /// `part-00001`, ... in it (one part without --shards). Every shard is written under a
    /// temporary name and renamed into place only when all are complete.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) shards: Option<u64>,
    /// Write shards of at most N records each, named as with --shards once their number is
    /// known.
    #[arg(long, value_name = "N", conflicts_with = "shards", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_records_per_shard: Option<u64>,
}

/// Flags of `from-json`.
#[derive(Debug, Args)]
pub(crate) struct FromJsonArgs {
    /// JSON Lines files, or `-` for standard input.
    #[arg(value_name = "IN", default_value = "-")]
    pub(crate) inputs: Vec<PathBuf>,
    /// The lines are `tensorflow.SequenceExample` JSON.
    #[arg(long)]
    pub(crate) sequence: bool,
    /// Output file, format and compression.
    #[command(flatten)]
    pub(crate) write: WriteOpts,
}

/// Flags of `convert`.
#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "IN", default_value = "-")]
    pub(crate) inputs: Vec<PathBuf>,
    /// Container format of the inputs.
    #[arg(long, value_enum, ignore_case = true, default_value = "tfrecord")]
    pub(crate) input_format: FormatArg,
    /// Compression of the inputs [default: from each file name; none for `-`].
    #[arg(long, value_enum, ignore_case = true)]
    pub(crate) input_compression: Option<CompressionArg>,
    /// The longest record read, in bytes (see `cat --help`).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    pub(crate) max_record_len: u64,
    /// The TFRecord side holds `tensorflow.SequenceExample` (only TFRecord to TFRecord:
    /// OFRecord has no sequences).
    #[arg(long)]
    pub(crate) sequence: bool,
    /// Allow OFRecord double lists to become float lists (rounding each value to the nearest
    /// `f32`; a finite value beyond its range, about 3.4e38, is an error); without it a double
    /// list is an error naming the feature.
    #[arg(long)]
    pub(crate) allow_lossy_double: bool,
    /// Skip checking each input record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Sharded output.
    #[command(flatten)]
    pub(crate) sharding: ShardOpts,
    /// Write over an existing output (without it, an existing output is an error). With
    /// --shards or --max-records-per-shard, an existing shard set of OUT's name (any shard
    /// count: `train-*-of-*.tfrecord` for `train.tfrecord`, or the `part-*` files of an OFRecord
    /// directory) is replaced: once the new set is complete, the old set's files are removed
    /// (those the new set does not replace named on standard error) and then the new shards
    /// are renamed into place, so that the directory never holds two sets a reader would mix,
    /// even after a crash or an error during the renames (an in-place reshard, `convert
    /// 'd/t-*' --shards 2 -o d/t.tfrecord --force`, leaves the new set alone).
    #[arg(long)]
    pub(crate) force: bool,
    /// Output file, format and compression.
    #[command(flatten)]
    pub(crate) write: WriteOpts,
    /// Limit, skip, shard, shuffle, damaged records of the inputs.
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// Flags of `gen`.
#[derive(Debug, Args)]
pub(crate) struct GenArgs {
    /// TOML spec files.
    #[arg(value_name = "SPEC", required = true)]
    pub(crate) specs: Vec<PathBuf>,
    /// The directory to write the generated files to.
    #[arg(short = 'o', long = "out-dir", value_name = "DIR")]
    pub(crate) out_dir: PathBuf,
    /// Write nothing; fail if a generated file in DIR is missing or differs.
    #[arg(long)]
    pub(crate) check: bool,
    /// The path of `tfrecord_core` in the generated code.
    #[arg(long, value_name = "PATH", default_value = "::tfrecord_core")]
    pub(crate) crate_path: String,
    /// Also generate a file of this name that includes every generated file in a module.
    #[arg(long, value_name = "NAME")]
    pub(crate) include_file: Option<PathBuf>,
}

/// Flags of `parse`.
#[derive(Debug, Args)]
pub(crate) struct ParseArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// The TOML spec whose features to parse with.
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: PathBuf,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// Records per batch; the last batch may be shorter.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_size: u64,
    /// All records in one batch, as one `tf.io.parse_example` call over them (memory grows with
    /// the input).
    #[arg(long, conflicts_with = "batch_size")]
    pub(crate) one_batch: bool,
    /// Skip checking each record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Allow an OFRecord double list that the spec reads to be read as float32 values
    /// (`tf.io.parse_example` reads no float64, so a `double` feature parses to float32; each
    /// value is rounded to the nearest `f32`, and a finite value beyond its range, about
    /// 3.4e38, is an error); without it such a list is an error naming the feature. OFRecord
    /// inputs are read as `tf.train.Example`s: int32 lists widen to int64 without loss.
    #[arg(long)]
    pub(crate) allow_lossy_double: bool,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit, skip, shard, shuffle, damaged records.
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// Parquet compression codecs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodecArg {
    /// No compression.
    None,
    /// Snappy (pyarrow's default).
    Snappy,
    /// Zstandard.
    Zstd,
    /// LZ4 (raw).
    Lz4,
    /// Gzip.
    Gzip,
    /// Brotli.
    Brotli,
}

/// Flags of `to-parquet`.
#[derive(Debug, Args)]
pub(crate) struct ToParquetArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input
    /// (not without `--spec`: inferring needs a first pass).
    #[arg(value_name = "IN", default_value = "-")]
    pub(crate) inputs: Vec<PathBuf>,
    /// The TOML spec of the records [default: inferred from the inputs]. Features it does not
    /// name are left out of the file, as `tf.io.parse_example` leaves them out (a record with
    /// `deny_unknown_keys = true` makes them an error instead); an inferred spec names every
    /// feature that holds values.
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: Option<PathBuf>,
    /// The record of the spec to use [default: the spec's only record]; without `--spec`, the
    /// name of the inferred record.
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// The records are `tensorflow.SequenceExample`s (without `--spec`; with it, the spec's
    /// record says, and this flag beside an Example record is an error). A record holding
    /// feature lists read as an Example is an error, not a record whose lists are dropped.
    #[arg(long)]
    pub(crate) sequence: bool,
    /// The Parquet file to write, or `-` for standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT.parquet")]
    pub(crate) output: PathBuf,
    /// Records decoded per Arrow batch (a batch ends early once its records reach 64 MiB).
    #[arg(long, value_name = "N", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_size: u64,
    /// Rows per Parquet row group (a row group also ends once it holds 128 MiB encoded: the
    /// writer holds the row group it writes in memory).
    #[arg(long, value_name = "N", default_value_t = 131_072, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) row_group_size: u64,
    /// Parquet compression.
    #[arg(long, value_enum, ignore_case = true, default_value = "snappy")]
    pub(crate) codec: CodecArg,
    /// LargeList, LargeBinary and LargeUtf8 (64-bit offsets) instead of List, Binary and Utf8.
    #[arg(long)]
    pub(crate) large_lists: bool,
    /// Without `--spec`: the most distinct feature keys (and feature list keys) the inferred
    /// spec may hold, as `infer --max-features`.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_features: u64,
    /// Write over an existing output (without it, an existing output is an error).
    #[arg(long)]
    pub(crate) force: bool,
    /// Skip checking each input record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit, skip, shard, shuffle, damaged records of the inputs.
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// Flags of `from-parquet`.
#[derive(Debug, Args)]
pub(crate) struct FromParquetArgs {
    /// Parquet files, directories of them (their `*.parquet` files in name order, as Spark and
    /// pyarrow's `write_to_dataset` write them; hidden and `_` files left out; a partitioned
    /// table's subdirectories are refused), or quoted glob patterns.
    #[arg(value_name = "IN", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// The TOML spec to write the rows with [default: the one in the file's metadata, else one
    /// read off the column types].
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: Option<PathBuf>,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// Allow float64 columns to become float lists of a `tf.train.Example` (rounding each value
    /// to the nearest `f32`; a finite value beyond its range, about 3.4e38, is an error naming
    /// the column and row); without it such a column is an error naming it.
    #[arg(long)]
    pub(crate) allow_lossy_double: bool,
    /// Write over an existing output (without it, an existing output is an error); with
    /// --shards or --max-records-per-shard, an existing shard set of OUT's name is replaced,
    /// as by `convert --force`.
    #[arg(long)]
    pub(crate) force: bool,
    /// Output file, format and compression.
    #[command(flatten)]
    pub(crate) write: WriteOpts,
    /// Sharded output.
    #[command(flatten)]
    pub(crate) sharding: ShardOpts,
    /// Which rows are written.
    #[command(flatten)]
    pub(crate) rows: RowArgs,
}

/// Which rows of `from-parquet`'s inputs are written.
#[derive(Clone, Copy, Debug, Default, Args)]
pub(crate) struct RowArgs {
    /// Write at most N rows (over all inputs, after --shard and --skip).
    #[arg(short = 'n', long, value_name = "N")]
    pub(crate) limit: Option<u64>,
    /// Leave out the first N rows (after --shard).
    #[arg(long, value_name = "N")]
    pub(crate) skip: Option<u64>,
    /// Write shard I of N (0 <= I < N): the rows of all inputs, in order, cut into N runs of
    /// nearly equal length (of T rows in all, shard I holds rows I*T/N up to (I+1)*T/N), so
    /// that the N shards together hold every row exactly once. The row counts come from the
    /// files' footers: no row is read twice.
    #[arg(long, value_name = "I/N", value_parser = crate::dataset::parse_shard)]
    pub(crate) shard: Option<(usize, usize)>,
}

impl RowArgs {
    /// The rows `start..end` (numbered over all inputs, in order) of `total` the flags select.
    pub(crate) fn range(&self, total: u64) -> (u64, u64) {
        let (mut start, mut end) = (0, total);
        if let Some((i, n)) = self.shard {
            let at = |k: usize| {
                let k = u128::try_from(k).unwrap_or(u128::MAX);
                let n = u128::try_from(n).unwrap_or(1).max(1);
                u64::try_from(u128::from(total) * k / n).unwrap_or(total)
            };
            (start, end) = (at(i), at(i + 1));
        }
        start = start.saturating_add(self.skip.unwrap_or(0)).min(end);
        if let Some(limit) = self.limit {
            end = end.min(start.saturating_add(limit));
        }
        (start, end)
    }
}

/// Flags of `infer`.
#[derive(Debug, Args)]
pub(crate) struct InferArgs {
    /// Record files, directories of shards, quoted glob patterns, or `-` for standard input.
    #[arg(value_name = "FILE", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// The records are `tensorflow.SequenceExample`s.
    #[arg(long)]
    pub(crate) sequence: bool,
    /// The record name (a Rust type name) [default: from the first file name, else `Record`].
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// The most distinct feature keys (and feature list keys) the inferred spec may hold: a
    /// record past it is an error naming it. Each key costs memory while inferring, and a
    /// Parquet column each; records with more keys than this are seldom a table.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_features: u64,
    /// Skip checking each record's data checksum (the length checksum is always checked).
    #[arg(long)]
    pub(crate) no_verify_data_crc: bool,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
    /// Limit (records scanned), skip, shard, shuffle, damaged records.
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// Flags of `from-avro`.
#[derive(Debug, Args)]
pub(crate) struct FromAvroArgs {
    /// Avro object container files (any codec: null, deflate, snappy, zstandard, bzip2, xz), or
    /// `-` for standard input.
    #[arg(value_name = "IN", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// The TOML spec: each feature's `source` is its key expression (else its name).
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: PathBuf,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// Read the files with this reader schema (`.avsc`): Avro schema resolution projects
    /// fields, promotes types (`int` to `long`, `float` to `double`, a `date` to `long`), reads
    /// the writer's names as the reader's types' and fields' `aliases` say, and fills new
    /// fields' defaults [default: each file's writer schema].
    #[arg(long, value_name = "SCHEMA.avsc")]
    pub(crate) reader_schema: Option<PathBuf>,
    /// Print the batched tensors (one JSON object per batch, as `parse` prints them) instead of
    /// writing records.
    #[arg(long, conflicts_with = "output")]
    pub(crate) tensors: bool,
    /// With `--tensors`: records per batch; the last batch may be shorter [default: all
    /// records in one batch].
    #[arg(long, value_name = "N", requires = "tensors", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_size: Option<u64>,
    /// Output file, or `-` for standard output (required unless `--tensors`).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Write over an existing output (without it, an existing output is an error).
    #[arg(long, conflicts_with = "tensors")]
    pub(crate) force: bool,
    /// Format, compression and level.
    #[command(flatten)]
    pub(crate) encoding: Encoding,
}

/// The input format of `from-records`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RecordFormatArg {
    /// JSON Lines: one JSON object per line.
    #[value(alias = "json", alias = "ndjson")]
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
}

/// Flags of `from-records`.
#[derive(Debug, Args)]
pub(crate) struct FromRecordsArgs {
    /// A JSON Lines or CSV file, or `-` for standard input.
    #[arg(value_name = "IN", default_value = "-")]
    pub(crate) input: PathBuf,
    /// The input format [default: from the file name (`.csv`, `.tsv`: csv), else jsonl].
    #[arg(long, value_enum, ignore_case = true)]
    pub(crate) format: Option<RecordFormatArg>,
    /// A TOML spec forcing the dtype (and shape, default) of some fields: each feature reads
    /// the field its `source` names (`a/b` for nested objects), else its key. Fields the spec
    /// does not read keep their own names; one whose name is the key of a spec feature read
    /// from another field is an error (one of the two values would be lost).
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: Option<PathBuf>,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME", requires = "spec")]
    pub(crate) record: Option<String>,
    /// Leave out fields that cannot be mapped (with a warning on standard error) instead of
    /// failing.
    #[arg(long)]
    pub(crate) skip_unmappable: bool,
    /// The CSV delimiter [default: `,`; a tab for `.tsv`].
    #[arg(long, value_name = "CHAR")]
    pub(crate) delimiter: Option<char>,
    /// Write over an existing output (without it, an existing output is an error).
    #[arg(long)]
    pub(crate) force: bool,
    /// Output file, format and compression.
    #[command(flatten)]
    pub(crate) write: WriteOpts,
}

/// Flags of `from-images`.
#[derive(Debug, Args)]
pub(crate) struct FromImagesArgs {
    /// The folder: one sub-folder per class (`flower_photos/daisy/*.jpg`), or images only.
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
    /// The output file (the shard name prefix with `--shards`), a directory for OFRecord
    /// `part-NNNNN` files, or `-` for standard output (one shard).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: PathBuf,
    /// Split the records over this many files: `prefix-00000-of-00004.tfrecord`, ...
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) shards: u64,
    /// The shuffle seed (the same seed gives the same order everywhere).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Keep the images in name order instead of shuffling them.
    #[arg(long)]
    pub(crate) no_shuffle: bool,
    /// Write over existing outputs (without it, an existing output is an error). With
    /// `--shards N` (or OFRecord `part-*` files), an existing shard set of OUT's name, of any
    /// shard count, is replaced: once the new files are in place, the old set's other files are
    /// removed, each named on standard error, so that the directory never holds two sets a
    /// reader would mix.
    #[arg(long)]
    pub(crate) force: bool,
    /// Format (TFRecord files, or OFRecord `part-NNNNN` files in the directory OUT),
    /// compression and level.
    #[command(flatten)]
    pub(crate) encoding: Encoding,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}

/// Flags of `index`.
#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// Uncompressed record files, directories of shards, quoted glob patterns, or `-` for standard input
    /// (with `-o`).
    #[arg(value_name = "IN", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// The index file of the one input, or `-` for standard output [default: `IN.idx` for
    /// each input].
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Input format and compression.
    #[command(flatten)]
    pub(crate) read: ReadOpts,
}
