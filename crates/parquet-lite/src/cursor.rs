//! A column read a few rows at a time: the parquet crate's column reader decodes a page
//! as its rows are asked for, so a cursor holds one page of one column chunk, whatever the
//! size of the file. Its levels and values become a `Column` here: nulls as 0 with a
//! validity bitmap, strings as keys into the cursor's dictionary, lists as offsets.

use std::sync::Arc;

use fast_hash::FastMap;
use parquet::column::reader::ColumnReaderImpl;
use parquet::data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type};

use crate::column::{Column, Values};
use crate::error::{guarded, Error, Result};
use crate::schema::{Kind, Leaf, Shape};
use crate::ParquetFile;

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
    dictionary: Vec<Vec<u8>>,
    intern: FastMap<Vec<u8>, u32>,
    /// One read's levels and present values, as decoded and as integers or keys.
    def: Vec<i16>,
    rep: Vec<i16>,
    int32s: Vec<i32>,
    bytes: Vec<ByteArray>,
    ints: Vec<i64>,
    keys: Vec<u32>,
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
            dictionary: Vec::new(),
            intern: FastMap::default(),
            def: Vec::new(),
            rep: Vec::new(),
            int32s: Vec::new(),
            bytes: Vec::new(),
            ints: Vec::new(),
            keys: Vec::new(),
        })
    }

    /// The strings behind `Values::Strings` keys.
    pub fn dictionary(&self) -> &[Vec<u8>] {
        &self.dictionary
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

    /// Decodes up to `rows` more rows of the current chunk into the level buffers and the
    /// present values into `ints` or `keys`: (rows, levels); (0, 0) at the chunk's end.
    fn read_chunk(&mut self, rows: usize) -> Result<(usize, usize)> {
        self.def.clear();
        self.rep.clear();
        self.ints.clear();
        self.keys.clear();
        let leaf = &self.leaf;
        let def = (leaf.max_def() > 0).then_some(&mut self.def);
        let rep = self.list_def.is_some().then_some(&mut self.rep);
        let Some(reader) = self.reader.as_mut() else {
            return Ok((0, 0));
        };
        let (rows, _, levels) = match reader {
            Reader::Int32(r) => {
                self.int32s.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.int32s))?;
                let unsigned = matches!(self.kind, Kind::Int32 { unsigned: true });
                self.ints.extend(self.int32s.iter().map(|&v| {
                    if unsigned {
                        i64::from(v as u32)
                    } else {
                        i64::from(v)
                    }
                }));
                got
            }
            Reader::Int64(r) => guarded(|| r.read_records(rows, def, rep, &mut self.ints))?,
            Reader::Bytes(r) => {
                self.bytes.clear();
                let got = guarded(|| r.read_records(rows, def, rep, &mut self.bytes))?;
                for value in &self.bytes {
                    let text = value.data();
                    let key = match self.intern.get(text) {
                        Some(&key) => key,
                        None => {
                            let key = self.dictionary.len() as u32;
                            self.dictionary.push(text.to_vec());
                            self.intern.insert(text.to_vec(), key);
                            key
                        }
                    };
                    self.keys.push(key);
                }
                got
            }
        };
        Ok((rows, levels))
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
            let (got, levels) = self
                .read_chunk(rows - out.rows)
                .map_err(|err| self.at_column(err))?;
            if got == 0 && levels == 0 {
                self.reader = None; // on to the next row group
                continue;
            }
            self.scatter(levels, rows, &mut out);
        }
        if let Values::Lists { offsets, values } = &mut out.values {
            if out.rows > 0 {
                offsets.push(values.len() as i64);
            }
        }
        Ok(out)
    }

    /// Appends the rows of the `levels` levels just decoded to `out` (which will hold
    /// `rows` rows).
    fn scatter(&self, levels: usize, rows: usize, out: &mut Column) {
        let full = self.leaf.max_def();
        let present = self.ints.len() + self.keys.len();
        match self.list_def {
            None if present == levels => {
                // No nulls among these rows: the values as they are.
                match &mut out.values {
                    Values::Ints(v) => v.extend_from_slice(&self.ints),
                    Values::Strings(v) => v.extend_from_slice(&self.keys),
                    Values::Lists { .. } => unreachable!("flat column"),
                }
                if let Some(valid) = &mut out.valid {
                    valid.resize(valid.len() + present, true);
                }
                out.rows += present;
            }
            None => {
                let valid = out.valid.get_or_insert_with(|| {
                    let mut valid = Vec::with_capacity(rows);
                    valid.resize(out.rows, true);
                    valid
                });
                let defs = &self.def[..levels];
                valid.extend(defs.iter().map(|&d| d == full));
                match &mut out.values {
                    Values::Ints(v) => scatter_flat(defs, full, &self.ints, v),
                    Values::Strings(v) => scatter_flat(defs, full, &self.keys, v),
                    Values::Lists { .. } => unreachable!("flat column"),
                }
                out.rows += levels;
            }
            Some(list_def) => {
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

/// Per level: the next present value when `def == full`, else 0.
#[inline]
fn scatter_flat<T: Copy + Default>(defs: &[i16], full: i16, present: &[T], out: &mut Vec<T>) {
    let mut next = 0;
    out.extend(defs.iter().map(|&d| {
        if d == full {
            next += 1;
            present[next - 1]
        } else {
            T::default()
        }
    }));
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
