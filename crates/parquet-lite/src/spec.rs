//! What a writer's caller gives: each column's name, type and encoding (`ColumnSpec`) and a
//! row group's rows of it (`ColumnData`).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// Integers stored as INT32 (`bits` <= 32, annotated when narrower) or INT64.
    Int { bits: u8 },
    /// UTF-8 strings.
    String,
    /// A list of integers per row (optional list of optional elements, pyarrow's layout).
    IntList { bits: u8 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Dictionary,
    Delta,
}

#[derive(Clone, Debug)]
pub struct ColumnSpec {
    pub name: String,
    pub kind: ValueKind,
    pub nullable: bool,
    pub encoding: Encoding,
}

/// One column's rows of a row group.
pub enum ColumnData<'a> {
    Ints {
        values: &'a [i64],
        valid: Option<&'a [bool]>,
    },
    /// `keys` index `dict`.
    Strings {
        keys: &'a [u32],
        dict: &'a [&'a str],
        valid: Option<&'a [bool]>,
    },
    /// `offsets` has rows + 1 entries into `values`.
    Lists {
        offsets: &'a [i64],
        values: &'a [i64],
        valid: Option<&'a [bool]>,
    },
}

/// Same type and encoding (the name aside).
pub(crate) fn same_kind(a: &ColumnSpec, b: &ColumnSpec) -> bool {
    (a.kind, a.nullable, a.encoding) == (b.kind, b.nullable, b.encoding)
}

impl ColumnData<'_> {
    /// The same slices (not merely equal values: no comparison of the data).
    pub(crate) fn same(&self, other: &Self) -> bool {
        fn opt<T>(a: Option<&[T]>, b: Option<&[T]>) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => std::ptr::eq(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        match (self, other) {
            (
                Self::Ints { values, valid },
                Self::Ints {
                    values: v2,
                    valid: d2,
                },
            ) => std::ptr::eq(*values, *v2) && opt(*valid, *d2),
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct WriteOptions {
    pub page_rows: usize,
    pub zstd: bool,
}

/// The Parquet physical type (parquet.thrift `Type`) of a column of `kind`: INT32, INT64 or
/// BYTE_ARRAY.
pub(crate) fn physical(kind: ValueKind) -> i32 {
    match kind {
        ValueKind::Int { bits } | ValueKind::IntList { bits } if bits <= 32 => 1,
        ValueKind::Int { .. } | ValueKind::IntList { .. } => 2,
        ValueKind::String => 6,
    }
}
