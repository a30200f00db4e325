//! A column read a few rows at a time: the parquet crate's column reader decodes a page
//! as its rows are asked for, so a cursor holds one page of one column chunk, whatever the
//! size of the file. Its levels and values become a `Column` here: nulls as 0 with a
//! validity bitmap, strings as keys into the cursor's dictionary, lists as offsets.

use std::sync::Arc;

use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};

use crate::column::{Column, Values};
use crate::error::{guarded, Error, Result};
use crate::schema::{Kind, Leaf, Shape};
use crate::strings::Strings;
use crate::ParquetFile;

/// Rows decoded per call of the column reader: its level and value buffers (up to 24
/// bytes a value) stay in the cache however many rows the caller asks for (the layout
/// scan asks for 64 K).
const READ_ROWS: usize = 4096;

/// The reader of the current column chunk, by physical type.
enum Reader {
    Int32(ColumnReaderImpl<Int32Type>),
    Int64(ColumnReaderImpl<Int64Type>),
    Bytes(ColumnReaderImpl<ByteArrayType>),
}

pub struct ColumnCursor {
    file: Arc<ParquetFile>,
    leaf: Leaf,
    kind: Kind,
    list_def: Option<i16>,
    next_group: usize,
    end_group: usize,
    reader: Option<Reader>,
    /// Every distinct string the cursor has met (keys of `Values::Strings`).
    strings: Strings,
    /// One read's levels and present values as decoded (`ints`: a list's elements).
    def: Vec<i16>,
    rep: Vec<i16>,
    int32s: Vec<i32>,
    bytes: Vec<ByteArray>,
    ints: Vec<i64>,
}

impl ColumnCursor {
    /// A cursor over row groups `groups` of `leaf`.
    pub(crate) fn new(
        file: Arc<ParquetFile>,
        leaf: &Leaf,
        groups: std::ops::Range<usize>,
    ) -> Result<Self> {
        let (kind, shape) = leaf.read_as.clone().map_err(Error::Unsupported)?;
        let list_def = match shape {
            Shape::Flat => None,
            Shape::List { list_def } => Some(list_def),
        };
        if kind == Kind::Bytes && list_def.is_some() {
            return Err(Error::Unsupported(format!(
                "column {} is a list of strings",
                leaf.name
            )));
        }
        Ok(Self {
            file,
            leaf: leaf.clone(),
            kind,
            list_def,
            next_group: groups.start,
            end_group: groups.end,
            reader: None,
            strings: Strings::default(),
            def: Vec::new(),
            rep: Vec::new(),
            int32s: Vec::new(),
            bytes: Vec::new(),
            ints: Vec::new(),
        })
    }

    /// The strings behind `Values::Strings` keys.
    pub fn dictionary(&self) -> &[Vec<u8>] {
        &self.strings.dictionary
    }

    fn at_column(&self, err: Error) -> Error {
        err.context(&format!("column {}", self.leaf.name))
    }

    /// Starts the next row group's column chunk; false when there is none.
    fn open_chunk(&mut self) -> Result<bool> {
        if self.next_group >= self.end_group {
            return Ok(false);
        }
        let pages = self.file.pages(self.next_group, &self.leaf)?;
        self.next_group += 1;
        let descr = Arc::clone(&self.leaf.descr);
        self.reader = Some(match self.kind {
            Kind::Int32 { .. } => Reader::Int32(ColumnReaderImpl::new(descr, pages)),
            Kind::Int64 => Reader::Int64(ColumnReaderImpl::new(descr, pages)),
            Kind::Bytes => Reader::Bytes(ColumnReaderImpl::new(descr, pages)),
        });
        Ok(true)
    }

    /// Decodes up to `rows` more rows of the current chunk and appends them to `out`
    /// (sized for `capacity` rows); returns the rows read, 0 at the chunk's end.
    fn read_chunk(&mut self, rows: usize, capacity: usize, out: &mut Column) -> Result<usize> {
        self.def.clear();
        self.rep.clear();
        let full = self.leaf.max_def();
        let def = (full > 0).then_some(&mut self.def);
        let rep = self.list_def.is_some().then_some(&mut self.rep);
        let Some(reader) = self.reader.as_mut() else {
            return Ok(0);
        };
        let unsigned = matches!(self.kind, Kind::Int32 { unsigned: true });
        let widen = |v: &i32| {
            if unsigned {
                i64::from(*v as u32)
            } else {
                i64::from(*v)
            }
        };
        // Flat columns go straight into `out`; a list's values through `ints` first.
        let (present, levels) = match (reader, &mut out.values) {
            (Reader::Int64(r), Values::Ints(v)) => {
                let base = v.len();
                let (_, present, levels) = guarded(|| r.read_records(rows, def, rep, v))?;
                if present < levels {
                    spread(v, base, &self.def[..levels], full);
                }
                (present, levels)
            }
            (Reader::Int32(r), Values::Ints(v)) => {
                self.int32s.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.int32s))?;
                place(
                    v,
                    self.int32s.iter().map(widen),
                    &self.def,
                    got.1,
                    got.2,
                    full,
                );
                (got.1, got.2)
            }
            (Reader::Bytes(r), Values::Strings(v)) => {
                self.bytes.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.bytes))?;
                let strings = &mut self.strings;
                let keys = self.bytes.iter().map(|b| strings.key(b));
                place(v, keys, &self.def, got.1, got.2, full);
                (got.1, got.2)
            }
            (Reader::Int64(r), Values::Lists { .. }) => {
                self.ints.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.ints))?;
                (got.1, got.2)
            }
            (Reader::Int32(r), Values::Lists { .. }) => {
                self.int32s.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.int32s))?;
                self.ints.clear();
                self.ints.extend(self.int32s.iter().map(widen));
                (got.1, got.2)
            }
            _ => unreachable!("a cursor's reader and output are of its kind"),
        };
        if self.list_def.is_some() {
            let before = out.rows;
            self.scatter_lists(levels, out);
            return Ok(out.rows - before);
        }
        if present < levels {
            let valid = out.valid.get_or_insert_with(|| {
                let mut valid = Vec::with_capacity(capacity);
                valid.resize(out.rows, true);
                valid
            });
            valid.extend(self.def[..levels].iter().map(|&d| d == full));
        } else if let Some(valid) = &mut out.valid {
            valid.resize(valid.len() + levels, true);
        }
        out.rows += levels;
        Ok(levels)
    }

    /// The next `rows` rows (fewer at the end of the column).
    pub fn read(&mut self, rows: usize) -> Result<Column> {
        // Sized once: growing the columns chunk by chunk costs reallocations and copies.
        let strings = self.kind == Kind::Bytes;
        let mut out = Column::with_capacity(self.list_def.is_some(), strings, rows);
        while out.rows < rows {
            if self.reader.is_none() && !self.open_chunk()? {
                break;
            }
            let want = (rows - out.rows).min(READ_ROWS);
            let got = self
                .read_chunk(want, rows, &mut out)
                .map_err(|err| self.at_column(err))?;
            if got == 0 {
                self.reader = None; // on to the next row group
            }
        }
        if let Values::Lists { offsets, values } = &mut out.values {
            if out.rows > 0 {
                offsets.push(values.len() as i64);
            }
        }
        Ok(out)
    }

    /// Appends the list rows of the `levels` levels just decoded (their present elements
    /// in `ints`) to `out`.
    fn scatter_lists(&self, levels: usize, out: &mut Column) {
        let full = self.leaf.max_def();
        let list_def = self.list_def.unwrap_or(0);
        let Values::Lists { offsets, values } = &mut out.values else {
            unreachable!("list column")
        };
        let mut next = 0;
        for k in 0..levels {
            let def = if full == 0 { 0 } else { self.def[k] };
            if self.rep[k] == 0 {
                if out.rows > 0 {
                    offsets.push(values.len() as i64);
                }
                push_valid(&mut out.valid, out.rows, def >= list_def);
                out.rows += 1;
            }
            if def > list_def {
                values.push(if def == full { self.ints[next] } else { 0 });
                next += usize::from(def == full);
            }
        }
    }

    /// Skips `rows` rows. The column reader passes over whole pages unread where their
    /// headers give their row counts; the rest is decoded and dropped.
    pub fn skip(&mut self, rows: usize) -> Result<()> {
        let mut left = rows;
        while left > 0 {
            if self.reader.is_none() && !self.open_chunk()? {
                return Err(
                    self.at_column(Error::Corrupt("column ends before the rows to skip".into()))
                );
            }
            let skipped = match self.reader.as_mut().expect("opened above") {
                Reader::Int32(r) => guarded(|| r.skip_records(left)),
                Reader::Int64(r) => guarded(|| r.skip_records(left)),
                Reader::Bytes(r) => guarded(|| r.skip_records(left)),
            }
            .map_err(|err| self.at_column(err))?;
            if skipped == 0 {
                self.reader = None; // on to the next row group
            }
            left -= skipped;
        }
        Ok(())
    }
}

/// Appends `levels` rows to `out`: the `present` values in order where `defs` says a value
/// (`def == full`), 0 where it says null.
#[inline]
fn place<T: Copy + Default>(
    out: &mut Vec<T>,
    values: impl Iterator<Item = T>,
    defs: &[i16],
    present: usize,
    levels: usize,
    full: i16,
) {
    if present == levels {
        out.extend(values);
        return;
    }
    let mut values = values;
    out.extend(defs[..levels].iter().map(|&d| {
        if d == full {
            values.next().unwrap_or_default()
        } else {
            T::default()
        }
    }));
}

/// Spreads the present values appended to `out` after `base` over the rows `defs` gives
/// them, 0 in the null rows, in place from the last row back.
fn spread(out: &mut Vec<i64>, base: usize, defs: &[i16], full: i16) {
    let mut next = out.len();
    out.resize(base + defs.len(), 0);
    for (k, &d) in defs.iter().enumerate().rev() {
        out[base + k] = if d == full {
            next -= 1;
            out[next]
        } else {
            0
        };
    }
}

/// Marks the row after `rows` rows valid or not (the bitmap is made at the first null).
#[inline]
fn push_valid(bitmap: &mut Option<Vec<bool>>, rows: usize, valid: bool) {
    match bitmap {
        Some(v) => v.push(valid),
        None if !valid => {
            let mut v = vec![true; rows];
            v.push(false);
            *bitmap = Some(v);
        }
        None => {}
    }
}
