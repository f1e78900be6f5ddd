//! Reading a batch's columns by name and type.

use super::{ByteColumn, Column, ColumnBatch, Leaf, Level};

impl ColumnBatch {
    /// The column of a feature, by its name (the first, where a context feature and a feature
    /// list share one).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

impl Column {
    /// Whether row `i` holds a value (false for a null row, and past the last row).
    pub fn is_valid(&self, i: usize) -> bool {
        self.valid
            .as_ref()
            .is_none_or(|v| v.get(i).copied().unwrap_or(false))
    }

    /// The offsets of the outermost list level (`rows + 1` of them), if the column's first
    /// level is a list.
    pub fn offsets(&self) -> Option<&[i64]> {
        match self.levels.first() {
            Some(Level::List(o)) => Some(o),
            _ => None,
        }
    }
}

impl Leaf {
    /// The values, if they are `int64`.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Leaf::Int64(v) => Some(v),
            _ => None,
        }
    }

    /// The values, if they are `int32`.
    pub fn as_i32(&self) -> Option<&[i32]> {
        match self {
            Leaf::Int32(v) => Some(v),
            _ => None,
        }
    }

    /// The values, if they are `bool`.
    pub fn as_bool(&self) -> Option<&[bool]> {
        match self {
            Leaf::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// The values, if they are `float`.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Leaf::Float(v) => Some(v),
            _ => None,
        }
    }

    /// The values, if they are `double`.
    pub fn as_f64(&self) -> Option<&[f64]> {
        match self {
            Leaf::Double(v) => Some(v),
            _ => None,
        }
    }

    /// The values, if they are `bytes` or `string`.
    pub fn as_bytes(&self) -> Option<&ByteColumn> {
        match self {
            Leaf::Bytes(v) | Leaf::String(v) => Some(v),
            _ => None,
        }
    }
}
