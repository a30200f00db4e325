//! A column read a few rows at a time: pages are decoded as the rows are asked for, so a
//! cursor holds one page of one column chunk, whatever the size of the file.

use std::collections::HashMap;
use std::sync::Arc;

use crate::column::{Column, Values};
use crate::delta::{DeltaDecoder, Wrap};
use crate::error::{corrupt, Error, Result};
use crate::metadata::Physical;
use crate::page::{
    PageKind, Pages, BYTE_STREAM_SPLIT, DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY,
    DELTA_LENGTH_BYTE_ARRAY, PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY,
};
use crate::rle::RleDecoder;
use crate::schema::{Leaf, Shape};
use crate::ParquetFile;

/// Levels decoded at a time: the cursor's buffers hold this many levels and values, so a
/// reader of hundreds of ranks x columns stays small.
const LEVEL_BATCH: usize = 1024;

enum ValueDecoder {
    Plain {
        pos: usize,
    },
    Dict(RleDecoder),
    Delta(DeltaDecoder),
    /// BYTE_STREAM_SPLIT: byte k of value i at `pos + k * count + i`.
    Split {
        pos: usize,
        count: usize,
        next: usize,
    },
    /// DELTA_LENGTH_BYTE_ARRAY (`prefixes` empty) or DELTA_BYTE_ARRAY: each string is the
    /// previous one's first `prefixes[i]` bytes, then `lengths[i]` bytes at `pos`.
    DeltaStrings {
        prefixes: Vec<i64>,
        lengths: Vec<i64>,
        next: usize,
        pos: usize,
        previous: Vec<u8>,
    },
}

struct PageState {
    body: Vec<u8>,
    /// Level slots of the page not yet decoded into the level buffers.
    left: usize,
    rep: Option<RleDecoder>,
    def: Option<RleDecoder>,
    values: ValueDecoder,
}

pub struct ColumnCursor {
    file: Arc<ParquetFile>,
    leaf: Leaf,
    list_def: Option<i16>,
    strings: bool,
    next_group: usize,
    end_group: usize,
    pages: Option<Pages>,
    page: Option<PageState>,
    /// The current chunk's dictionary: integers, or keys into `dictionary`.
    dict_ints: Vec<i64>,
    dict_keys: Vec<u32>,
    /// Every distinct string the cursor has met (keys of `Values::Strings`).
    dictionary: Vec<Vec<u8>>,
    intern: HashMap<Vec<u8>, u32>,
    rep: Vec<u16>,
    def: Vec<u16>,
    /// Buffered levels: `at..len` not yet consumed.
    at: usize,
    len: usize,
    ints: Vec<i64>,
    keys: Vec<u32>,
}

fn bit_width(max: i16) -> u32 {
    u16::BITS - (max as u16).leading_zeros()
}

fn read_u32(buf: &[u8], pos: usize) -> Result<usize> {
    match buf.get(pos..pos + 4) {
        Some(b) => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        None => corrupt("page ends inside a length"),
    }
}

impl ColumnCursor {
    /// A cursor over row groups `groups` of `leaf`.
    pub(crate) fn new(
        file: Arc<ParquetFile>,
        leaf: &Leaf,
        groups: std::ops::Range<usize>,
    ) -> Result<Self> {
        let shape = leaf.shape.clone().map_err(Error::Unsupported)?;
        let strings = match leaf.physical {
            Physical::Int32 | Physical::Int64 => false,
            Physical::ByteArray => true,
            other => {
                return Err(Error::Unsupported(format!(
                    "column {} of type {other:?}",
                    leaf.name
                )))
            }
        };
        let list_def = match shape {
            Shape::Flat => None,
            Shape::List { list_def } => Some(list_def),
        };
        if strings && list_def.is_some() {
            return Err(Error::Unsupported(format!("list of strings {}", leaf.name)));
        }
        Ok(Self {
            file,
            leaf: leaf.clone(),
            list_def,
            strings,
            next_group: groups.start,
            end_group: groups.end,
            pages: None,
            page: None,
            dict_ints: Vec::new(),
            dict_keys: Vec::new(),
            dictionary: Vec::new(),
            intern: HashMap::new(),
            rep: Vec::new(),
            def: Vec::new(),
            at: 0,
            len: 0,
            ints: Vec::new(),
            keys: Vec::new(),
        })
    }

    /// The strings behind `Values::Strings` keys.
    pub fn dictionary(&self) -> &[Vec<u8>] {
        &self.dictionary
    }

    fn error(&self, what: &str) -> Error {
        Error::Corrupt(format!("column {}: {what}", self.leaf.name))
    }

    /// Starts the next row group's column chunk; false when there is none.
    fn open_chunk(&mut self) -> Result<bool> {
        if self.next_group >= self.end_group {
            return Ok(false);
        }
        let chunk = self.file.chunk(self.next_group, self.leaf.index)?;
        let (start, len) = chunk.byte_range()?;
        self.pages = Some(Pages::new(start, len, chunk.codec));
        self.next_group += 1;
        self.dict_ints.clear();
        self.dict_keys.clear();
        Ok(true)
    }

    /// Loads the next data page (reading dictionary pages on the way); false at the end.
    fn next_page(&mut self) -> Result<bool> {
        loop {
            if self.pages.is_none() && !self.open_chunk()? {
                return Ok(false);
            }
            let file = &self.file.file;
            let Some(page) = self
                .pages
                .as_mut()
                .and_then(|p| p.next_page(file).transpose())
            else {
                self.pages = None;
                continue;
            };
            let page = page?;
            match page.kind {
                PageKind::Dictionary { values } => self.read_dictionary(&page.body, values)?,
                PageKind::Data {
                    values,
                    encoding,
                    v2_levels,
                } => {
                    self.page = Some(self.data_page(page.body, values, encoding, v2_levels)?);
                    return Ok(true);
                }
            }
        }
    }

    fn read_dictionary(&mut self, body: &[u8], values: usize) -> Result<()> {
        let mut pos = 0;
        if self.strings {
            self.dict_keys.clear();
            for _ in 0..values {
                let key = self.plain_string(body, &mut pos)?;
                self.dict_keys.push(key);
            }
        } else {
            self.dict_ints.clear();
            let mut ints = Vec::with_capacity(values.min(body.len()));
            self.plain_ints(body, &mut pos, values, &mut ints)?;
            self.dict_ints = ints;
        }
        Ok(())
    }

    fn data_page(
        &self,
        body: Vec<u8>,
        values: usize,
        encoding: i32,
        v2_levels: Option<(usize, usize)>,
    ) -> Result<PageState> {
        let (max_rep, max_def) = (self.leaf.max_rep, self.leaf.max_def);
        let mut pos = 0;
        let mut levels = |max: i16, v2_len: Option<usize>| -> Result<Option<RleDecoder>> {
            if max == 0 {
                return Ok(None);
            }
            let len = match v2_len {
                Some(len) => len,
                None => {
                    let len = read_u32(&body, pos)?;
                    pos += 4;
                    len
                }
            };
            if pos + len > body.len() {
                return Err(self.error("levels run past the page"));
            }
            let decoder = RleDecoder::new(pos, pos + len, bit_width(max))?;
            pos += len;
            Ok(Some(decoder))
        };
        let rep = levels(max_rep, v2_levels.map(|l| l.0))?;
        let def = levels(max_def, v2_levels.map(|l| l.1))?;
        let values_decoder = match encoding {
            PLAIN => ValueDecoder::Plain { pos },
            PLAIN_DICTIONARY | RLE_DICTIONARY => {
                let Some(&width) = body.get(pos) else {
                    if values == 0 {
                        return Ok(PageState {
                            body,
                            left: 0,
                            rep,
                            def,
                            values: ValueDecoder::Plain { pos },
                        });
                    }
                    return Err(self.error("dictionary page without a bit width"));
                };
                ValueDecoder::Dict(RleDecoder::new(pos + 1, body.len(), u32::from(width))?)
            }
            BYTE_STREAM_SPLIT if !self.strings => {
                let width = self.int_width();
                let bytes = body.len() - pos.min(body.len());
                if !bytes.is_multiple_of(width) {
                    return Err(self.error("byte-stream-split values of a partial width"));
                }
                ValueDecoder::Split {
                    pos,
                    count: bytes / width,
                    next: 0,
                }
            }
            DELTA_LENGTH_BYTE_ARRAY | DELTA_BYTE_ARRAY if self.strings => {
                // Every length first (the strings' bytes follow them).
                let all = |at: usize| -> Result<(Vec<i64>, usize)> {
                    let mut d = DeltaDecoder::new(&body, at, body.len(), Wrap::Int32)?;
                    let mut out = Vec::with_capacity(d.remaining().min(body.len()));
                    d.take(&body, d.remaining(), &mut out)?;
                    Ok((out, d.end_of_values()))
                };
                let (prefixes, at) = if encoding == DELTA_BYTE_ARRAY {
                    all(pos)?
                } else {
                    (Vec::new(), pos)
                };
                let (lengths, pos) = all(at)?;
                if !prefixes.is_empty() && prefixes.len() != lengths.len() {
                    return Err(self.error("prefix and suffix counts differ"));
                }
                ValueDecoder::DeltaStrings {
                    prefixes,
                    lengths,
                    next: 0,
                    pos,
                    previous: Vec::new(),
                }
            }
            DELTA_BINARY_PACKED if !self.strings => {
                let unsigned = self.leaf.int_type.is_some_and(|(_, signed)| !signed);
                let wrap = match self.leaf.physical {
                    Physical::Int32 if unsigned => Wrap::UInt32,
                    Physical::Int32 => Wrap::Int32,
                    _ => Wrap::Int64,
                };
                ValueDecoder::Delta(DeltaDecoder::new(&body, pos, body.len(), wrap)?)
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "encoding {other} of column {}",
                    self.leaf.name
                )))
            }
        };
        Ok(PageState {
            body,
            left: values,
            rep,
            def,
            values: values_decoder,
        })
    }

    /// Buffers the next levels of the current page, loading pages as needed; false at the
    /// end of the column.
    fn fill_levels(&mut self) -> Result<bool> {
        loop {
            if let Some(page) = &mut self.page {
                if page.left > 0 {
                    let n = page.left.min(LEVEL_BATCH);
                    self.rep.clear();
                    self.def.clear();
                    if let Some(d) = &mut page.rep {
                        d.take(&page.body, n, &mut self.rep, |v| v as u16)?;
                    }
                    if let Some(d) = &mut page.def {
                        d.take(&page.body, n, &mut self.def, |v| v as u16)?;
                    }
                    page.left -= n;
                    self.at = 0;
                    self.len = n;
                    return Ok(true);
                }
            }
            self.page = None;
            if !self.next_page()? {
                return Ok(false);
            }
        }
    }

    /// Bytes of an integer value: 4 (INT32) or 8.
    fn int_width(&self) -> usize {
        if self.leaf.physical == Physical::Int32 {
            4
        } else {
            8
        }
    }

    /// An integer's little-endian bytes (`b`: 4 or 8 of them) as i64, a UINT_32 unsigned.
    #[inline]
    fn int_of(&self, b: &[u8]) -> i64 {
        if b.len() == 4 {
            let v = [b[0], b[1], b[2], b[3]];
            if self.leaf.int_type.is_some_and(|(_, signed)| !signed) {
                i64::from(u32::from_le_bytes(v))
            } else {
                i64::from(i32::from_le_bytes(v))
            }
        } else {
            i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        }
    }

    fn plain_ints(&self, buf: &[u8], pos: &mut usize, n: usize, out: &mut Vec<i64>) -> Result<()> {
        let width = self.int_width();
        let Some(bytes) = buf.get(*pos..*pos + n * width) else {
            return Err(self.error("values run past the page"));
        };
        out.extend(bytes.chunks_exact(width).map(|b| self.int_of(b)));
        *pos += n * width;
        Ok(())
    }

    /// Values `next..next + n` of a BYTE_STREAM_SPLIT page of `count` values at `pos`.
    fn split_ints(
        &self,
        buf: &[u8],
        (pos, count, next): (usize, usize, usize),
        n: usize,
        out: &mut Vec<i64>,
    ) -> Result<()> {
        let width = self.int_width();
        if next + n > count || pos + count * width > buf.len() {
            return Err(self.error("byte-stream-split values end early"));
        }
        let mut bytes = [0u8; 8];
        for i in next..next + n {
            for (k, b) in bytes[..width].iter_mut().enumerate() {
                *b = buf[pos + k * count + i];
            }
            out.push(self.int_of(&bytes[..width]));
        }
        Ok(())
    }

    /// The key of string `bytes` (added to the dictionary at its first sight).
    fn intern(&mut self, bytes: &[u8]) -> u32 {
        if let Some(&key) = self.intern.get(bytes) {
            return key;
        }
        let key = self.dictionary.len() as u32;
        self.dictionary.push(bytes.to_vec());
        self.intern.insert(bytes.to_vec(), key);
        key
    }

    fn plain_string(&mut self, buf: &[u8], pos: &mut usize) -> Result<u32> {
        let len = read_u32(buf, *pos)?;
        let Some(bytes) = buf.get(*pos + 4..*pos + 4 + len) else {
            return Err(self.error("string runs past the page"));
        };
        *pos += 4 + len;
        Ok(self.intern(bytes))
    }

    /// Decodes the next `n` non-null values of the current page into `self.ints` or
    /// `self.keys`.
    fn take_values(&mut self, n: usize) -> Result<()> {
        self.ints.clear();
        self.keys.clear();
        if n == 0 {
            return Ok(());
        }
        let mut page = self
            .page
            .take()
            .ok_or_else(|| self.error("values without a page"))?;
        let result = (|| {
            match &mut page.values {
                ValueDecoder::Plain { pos } => {
                    if self.strings {
                        for _ in 0..n {
                            let key = self.plain_string(&page.body, pos)?;
                            self.keys.push(key);
                        }
                    } else {
                        let mut ints = std::mem::take(&mut self.ints);
                        self.plain_ints(&page.body, pos, n, &mut ints)?;
                        self.ints = ints;
                    }
                }
                ValueDecoder::Dict(d) => {
                    let size = if self.strings {
                        self.dict_keys.len()
                    } else {
                        self.dict_ints.len()
                    };
                    let mut bad = false;
                    if self.strings {
                        let keys = &self.dict_keys;
                        d.take(&page.body, n, &mut self.keys, |i| {
                            keys.get(i as usize).copied().unwrap_or_else(|| {
                                bad = true;
                                0
                            })
                        })?;
                    } else {
                        let ints = &self.dict_ints;
                        d.take(&page.body, n, &mut self.ints, |i| {
                            ints.get(i as usize).copied().unwrap_or_else(|| {
                                bad = true;
                                0
                            })
                        })?;
                    }
                    if bad {
                        return Err(self.error(&format!("dictionary index beyond {size}")));
                    }
                }
                ValueDecoder::Delta(d) => d.take(&page.body, n, &mut self.ints)?,
                ValueDecoder::Split { pos, count, next } => {
                    let mut ints = std::mem::take(&mut self.ints);
                    self.split_ints(&page.body, (*pos, *count, *next), n, &mut ints)?;
                    self.ints = ints;
                    *next += n;
                }
                ValueDecoder::DeltaStrings {
                    prefixes,
                    lengths,
                    next,
                    pos,
                    previous,
                } => {
                    if *next + n > lengths.len() {
                        return Err(self.error("delta-encoded strings end early"));
                    }
                    for (i, &len) in lengths.iter().enumerate().skip(*next).take(n) {
                        let keep = prefixes.get(i).map_or(0, |&p| p as usize);
                        let len = len as usize;
                        let suffix = page.body.get(*pos..pos.saturating_add(len));
                        let (Some(suffix), true) = (suffix, keep <= previous.len()) else {
                            return Err(self.error("delta-encoded string runs past the page"));
                        };
                        previous.truncate(keep);
                        previous.extend_from_slice(suffix);
                        *pos += len;
                        let key = self.intern(previous);
                        self.keys.push(key);
                    }
                    *next += n;
                }
            }
            Ok(())
        })();
        self.page = Some(page);
        result
    }

    /// The next `rows` rows (fewer at the end of the column).
    pub fn read(&mut self, rows: usize) -> Result<Column> {
        // Sized once: growing the columns chunk by chunk costs reallocations and copies.
        let mut out = Column::with_capacity(self.list_def.is_some(), self.strings, rows);
        let max_def = self.leaf.max_def;
        let mut got = 0;
        loop {
            if got == rows && self.list_def.is_none() {
                break;
            }
            if self.at == self.len && !self.fill_levels()? {
                break;
            }
            let (start, mut end) = (self.at, self.at);
            match self.list_def {
                None => end = start + (rows - got).min(self.len - start),
                Some(_) => {
                    while end < self.len {
                        if self.rep[end] == 0 {
                            if got == rows {
                                break;
                            }
                            got += 1;
                        }
                        end += 1;
                    }
                }
            }
            let present = if max_def == 0 {
                end - start
            } else {
                let full = max_def as u16;
                self.def[start..end].iter().filter(|&&d| d == full).count()
            };
            self.take_values(present)?;
            self.scatter(start, end, present, rows, &mut out);
            if self.list_def.is_none() {
                got += end - start;
            }
            self.at = end;
            if self.list_def.is_some() && end < self.len {
                break; // stopped at the first level of a row not asked for
            }
        }
        if let Values::Lists { offsets, values } = &mut out.values {
            if out.rows > 0 {
                offsets.push(values.len() as i64);
            }
        }
        Ok(out)
    }

    /// Appends levels `start..end` (and the `present` values just decoded for them) to `out`
    /// (which will hold `rows` rows).
    fn scatter(&self, start: usize, end: usize, present: usize, rows: usize, out: &mut Column) {
        let full = self.leaf.max_def as u16;
        match self.list_def {
            None if present == end - start => {
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
                let defs = &self.def[start..end];
                valid.extend(defs.iter().map(|&d| d == full));
                match &mut out.values {
                    Values::Ints(v) => scatter_flat(defs, full, &self.ints, 0, v),
                    Values::Strings(v) => scatter_flat(defs, full, &self.keys, 0, v),
                    Values::Lists { .. } => unreachable!("flat column"),
                }
                out.rows += end - start;
            }
            Some(list_def) => {
                let list_def = list_def as u16;
                let mut next = 0;
                for k in start..end {
                    let def = if full == 0 { 0 } else { self.def[k] };
                    if self.rep[k] == 0 {
                        if out.rows > 0 {
                            if let Values::Lists { offsets, values } = &mut out.values {
                                offsets.push(values.len() as i64);
                            }
                        }
                        out.push_valid(def >= list_def);
                    }
                    if def > list_def {
                        if let Values::Lists { values, .. } = &mut out.values {
                            values.push(if def == full { self.ints[next] } else { 0 });
                        }
                        next += usize::from(def == full);
                    }
                }
            }
        }
    }

    /// Skips `rows` rows. Whole pages of a flat column are passed over unread (a page's
    /// level count is its row count); the rest is decoded and dropped.
    pub fn skip(&mut self, rows: usize) -> Result<()> {
        let mut left = rows;
        let between_pages = self.at == self.len && self.page.as_ref().is_none_or(|p| p.left == 0);
        if self.list_def.is_none() && between_pages {
            self.page = None;
            while left > 0 {
                if self.pages.is_none() && !self.open_chunk()? {
                    break;
                }
                let file = Arc::clone(&self.file);
                let pages = self.pages.as_mut().expect("opened");
                match pages.peek(&file.file)? {
                    None => self.pages = None, // on to the next row group
                    Some((false, _)) => {
                        let page = pages.next_page(&file.file)?.expect("peeked");
                        self.read_dictionary(&page.body, page_values(&page))?;
                    }
                    Some((true, values)) if values <= left => {
                        pages.skip(&file.file)?;
                        left -= values;
                    }
                    Some(_) => break, // read in part below
                }
            }
        }
        while left > 0 {
            let n = left.min(1 << 16);
            let got = self.read(n)?.rows;
            if got == 0 {
                return corrupt("column ends before the rows to skip");
            }
            left -= got;
        }
        Ok(())
    }
}

/// Per level: the next present value when `def == full`, else `fill`.
#[inline]
fn scatter_flat<T: Copy>(defs: &[u16], full: u16, present: &[T], fill: T, out: &mut Vec<T>) {
    let mut next = 0;
    out.extend(defs.iter().map(|&d| {
        if d == full {
            next += 1;
            present[next - 1]
        } else {
            fill
        }
    }));
}

fn page_values(page: &crate::page::Page) -> usize {
    match page.kind {
        PageKind::Dictionary { values } | PageKind::Data { values, .. } => values,
    }
}
