//! One column chunk of a row group encoded as pages (`ChunkEncoder`): levels and values
//! flattened from the rows, the dictionary (or delta / plain) values, pages of at most
//! `page_rows` rows, compressed or not. The writer places the bytes in the file.

use std::borrow::Cow;

use crate::compress::{Compressor, SMALL_CHUNK};
use crate::encode::{delta, rle_hybrid, width_of};
use crate::error::{Error, Result};
use crate::spec::{physical, ColumnData, ColumnSpec, Encoding, ValueKind, WriteOptions};
use crate::thrift_write::{uleb, Struct};
use fast_hash::FastMap;

/// Dictionaries larger than this fall back to PLAIN (a dictionary page must stay small).
const DICT_LIMIT: usize = 1 << 16;
/// Entries of the dictionary encoder's cache (choose_values): 2^CACHE_BITS.
const CACHE_BITS: u32 = 6;
const PLAIN: i32 = 0;
const RLE: i32 = 3;
const DELTA_BINARY_PACKED: i32 = 5;
const RLE_DICTIONARY: i32 = 8;

/// What the footer says of an encoded chunk; offsets count from the chunk's first byte
/// until the writer `place`s it in the file.
#[derive(Clone)]
pub(crate) struct ChunkMeta {
    /// zstd-compressed (else uncompressed: small chunks are, see compress.rs).
    pub(crate) zstd: bool,
    pub(crate) encodings: Vec<i32>,
    pub(crate) num_values: i64,
    pub(crate) uncompressed: i64,
    pub(crate) compressed: i64,
    pub(crate) data_page_offset: i64,
    pub(crate) dictionary_page_offset: Option<i64>,
    pub(crate) null_count: i64,
    pub(crate) min_max: Option<(Vec<u8>, Vec<u8>)>,
}

impl ChunkMeta {
    /// The metadata of the chunk written at byte `at` of the file.
    pub(crate) fn placed(&self, at: u64) -> Self {
        let at = at as i64;
        let mut meta = self.clone();
        meta.data_page_offset += at;
        meta.dictionary_page_offset = meta.dictionary_page_offset.map(|d| d + at);
        meta
    }
}

/// Levels and non-null values of one column's rows.
pub(crate) struct Flattened<'a> {
    /// Repetition levels (lists only).
    rep: Vec<u64>,
    /// Definition levels; None when every level is the column's maximum.
    def: Option<Vec<u64>>,
    /// First level of each row and the level count after the last (lists only: a flat
    /// column has a level per row).
    row_starts: Option<Vec<usize>>,
    ints: Cow<'a, [i64]>,
    keys: Cow<'a, [u32]>,
    null_count: i64,
    levels: usize,
}

impl Flattened<'_> {
    fn level_range(&self, first: usize, last: usize) -> (usize, usize) {
        match &self.row_starts {
            Some(starts) => (starts[first], starts[last]),
            None => (first, last),
        }
    }
}

/// Vectors every column chunk reuses: fresh ones of a row group's size (~0.5 MB) went back
/// to the kernel after each chunk and were page-faulted in again (a tenth of a TiT
/// conversion's CPU).
#[derive(Default)]
struct Buffers {
    rep: Vec<u64>,
    def: Vec<u64>,
    starts: Vec<usize>,
    ints: Vec<i64>,
    keys: Vec<u32>,
    indices: Vec<u64>,
    bodies: Vec<Vec<u8>>,
}

impl Buffers {
    /// Takes back the vectors of a written chunk.
    fn recycle(&mut self, f: Flattened<'_>, values: Values, pages: Vec<(i32, i32, Vec<u8>)>) {
        self.rep = f.rep;
        if let Some(def) = f.def {
            self.def = def;
        }
        if let Some(starts) = f.row_starts {
            self.starts = starts;
        }
        if let Cow::Owned(ints) = f.ints {
            self.ints = ints;
        }
        if let Cow::Owned(keys) = f.keys {
            self.keys = keys;
        }
        if let Values::Dictionary { indices, .. } = values {
            self.indices = indices;
        }
        self.bodies
            .extend(pages.into_iter().map(|(_, _, body)| body));
    }
}

/// An emptied vector of `pool` (its memory kept).
fn reuse<T>(pool: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(pool);
    v.clear();
    v
}

/// The present values of `values` (the ones `valid` marks) and their definition levels,
/// in vectors of `kept` and `def` when some are null.
fn present<'a, T: Copy>(
    values: &'a [T],
    valid: Option<&[bool]>,
    nullable: bool,
    kept: &mut Vec<T>,
    def: &mut Vec<u64>,
) -> (Cow<'a, [T]>, Option<Vec<u64>>, i64) {
    match valid {
        Some(valid) if nullable && valid.iter().any(|&v| !v) => {
            let mut kept = reuse(kept);
            kept.extend(
                values
                    .iter()
                    .zip(valid)
                    .filter(|(_, &ok)| ok)
                    .map(|(&v, _)| v),
            );
            let nulls = (values.len() - kept.len()) as i64;
            let mut def = reuse(def);
            def.extend(valid.iter().map(|&ok| u64::from(ok)));
            (Cow::Owned(kept), Some(def), nulls)
        }
        _ => (Cow::Borrowed(values), None, 0),
    }
}

fn flatten<'a>(
    spec: &ColumnSpec,
    data: &ColumnData<'a>,
    rows: usize,
    pool: &mut Buffers,
) -> Result<Flattened<'a>> {
    let check = |n: usize, what: &str| {
        if n == rows {
            Ok(())
        } else {
            Err(Error::Unsupported(format!(
                "column {}: {n} {what} for {rows} rows",
                spec.name
            )))
        }
    };
    let mut f = Flattened {
        rep: Vec::new(),
        def: None,
        row_starts: None,
        ints: Cow::Borrowed(&[]),
        keys: Cow::Borrowed(&[]),
        null_count: 0,
        levels: rows,
    };
    match (spec.kind, data) {
        (ValueKind::Int { .. }, ColumnData::Ints { values, valid }) => {
            check(values.len(), "values")?;
            (f.ints, f.def, f.null_count) =
                present(values, *valid, spec.nullable, &mut pool.ints, &mut pool.def);
        }
        (ValueKind::String, ColumnData::Strings { keys, valid, .. }) => {
            check(keys.len(), "keys")?;
            (f.keys, f.def, f.null_count) =
                present(keys, *valid, spec.nullable, &mut pool.keys, &mut pool.def);
        }
        (
            ValueKind::IntList { .. },
            ColumnData::Lists {
                offsets,
                values,
                valid,
            },
        ) => {
            check(offsets.len().saturating_sub(1), "lists")?;
            // Levels of an (optional) list of optional elements: a null list, an empty
            // list, or one level per element (elements are never null here).
            let list_def = u64::from(spec.nullable);
            let (mut rep, mut def) = (reuse(&mut pool.rep), reuse(&mut pool.def));
            let mut starts = reuse(&mut pool.starts);
            let mut ints = reuse(&mut pool.ints);
            for i in 0..rows {
                starts.push(def.len());
                let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
                if !valid.is_none_or(|v| v[i]) {
                    rep.push(0);
                    def.push(0);
                    f.null_count += 1;
                } else if lo == hi {
                    rep.push(0);
                    def.push(list_def);
                } else {
                    for (k, &v) in values[lo..hi].iter().enumerate() {
                        rep.push(u64::from(k > 0));
                        def.push(list_def + 2);
                        ints.push(v);
                    }
                }
            }
            starts.push(def.len());
            f.levels = def.len();
            (f.rep, f.def, f.row_starts, f.ints) = (rep, Some(def), Some(starts), Cow::Owned(ints));
        }
        _ => {
            return Err(Error::Unsupported(format!(
                "column {}: data of another kind than its schema",
                spec.name
            )))
        }
    }
    Ok(f)
}

/// How the values of a chunk are written.
enum Values {
    /// Dictionary entries (PLAIN bytes) and an index per value; the least and greatest
    /// integer entry (None for strings).
    Dictionary {
        page: Vec<u8>,
        entries: usize,
        indices: Vec<u64>,
        bounds: Option<(i64, i64)>,
    },
    Delta,
    Plain,
}

fn plain_int(out: &mut Vec<u8>, v: i64, int32: bool) {
    if int32 {
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn plain_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
}

/// Encodes column chunks, one after another, with the buffers and compressor they share.
pub(crate) struct ChunkEncoder {
    options: WriteOptions,
    compressor: Compressor,
    buffers: Buffers,
}

impl ChunkEncoder {
    pub(crate) fn new(options: WriteOptions) -> Self {
        Self {
            options,
            compressor: Compressor::new(),
            buffers: Buffers::default(),
        }
    }

    /// Encodes `rows` rows of one column into `out` (emptied first), pages with their
    /// headers; returns the chunk's metadata.
    pub(crate) fn encode(
        &mut self,
        spec: &ColumnSpec,
        data: &ColumnData<'_>,
        rows: usize,
        out: &mut Vec<u8>,
    ) -> Result<ChunkMeta> {
        out.clear();
        let f = flatten(spec, data, rows, &mut self.buffers)?;
        let int32 = physical(spec.kind) == 1;
        let dict_strings = match data {
            ColumnData::Strings { dict, .. } => Some(*dict),
            _ => None,
        };
        let values = self.choose_values(spec, &f, dict_strings, int32)?;
        // A dictionary's entries have its values' bounds: a few entries to compare, not
        // every value (that pass cost 2 % of a TiT conversion's instructions).
        let bounds = match &values {
            Values::Dictionary { bounds, .. } => *bounds,
            Values::Delta | Values::Plain => int_bounds(&f.ints),
        };
        let min_max = min_max(&f, bounds, dict_strings, int32);
        if let (ValueKind::Int { bits } | ValueKind::IntList { bits }, Some((lo, hi))) =
            (spec.kind, bounds)
        {
            let range = -(1i128 << (bits - 1))..1i128 << (bits - 1);
            if !range.contains(&i128::from(lo)) || !range.contains(&i128::from(hi)) {
                return Err(Error::Unsupported(format!(
                    "column {}: values {lo}..{hi} do not fit {bits}-bit integers",
                    spec.name
                )));
            }
        }
        let (max_rep, max_def) = match spec.kind {
            ValueKind::IntList { .. } => (1u64, u64::from(spec.nullable) + 2),
            _ => (0, u64::from(spec.nullable)),
        };
        // Every page is encoded before any is written: the chunk's codec depends on its size.
        let page_rows = self.options.page_rows.max(1);
        let mut pages = Vec::with_capacity(rows.div_ceil(page_rows));
        let mut next_value = 0usize;
        for first in (0..rows).step_by(page_rows) {
            let last = (first + page_rows).min(rows);
            let (lo, hi) = f.level_range(first, last);
            let mut body = self.buffers.bodies.pop().unwrap_or_default();
            body.clear();
            if max_rep > 0 {
                levels(&mut body, &f.rep[lo..hi], max_rep);
            }
            let present = match &f.def {
                Some(def) => def[lo..hi].iter().filter(|&&d| d == max_def).count(),
                None => hi - lo,
            };
            if max_def > 0 {
                match &f.def {
                    Some(def) => levels(&mut body, &def[lo..hi], max_def),
                    None => constant_levels(&mut body, hi - lo, max_def, max_def),
                }
            }
            let span = next_value..next_value + present;
            next_value += present;
            let encoding = match &values {
                Values::Dictionary {
                    indices, entries, ..
                } => {
                    let width = width_of(entries.saturating_sub(1) as u64);
                    body.push(width as u8);
                    rle_hybrid(&mut body, &indices[span], width);
                    RLE_DICTIONARY
                }
                Values::Delta => {
                    delta(&mut body, &f.ints[span], int32);
                    DELTA_BINARY_PACKED
                }
                Values::Plain => {
                    match dict_strings {
                        Some(dict) => f.keys[span]
                            .iter()
                            .for_each(|&k| plain_str(&mut body, dict[k as usize].as_bytes())),
                        None => f.ints[span]
                            .iter()
                            .for_each(|&v| plain_int(&mut body, v, int32)),
                    }
                    PLAIN
                }
            };
            pages.push(((hi - lo) as i32, encoding, body));
        }
        let dict_bytes = match &values {
            Values::Dictionary { page, .. } => page.len(),
            _ => 0,
        };
        let encoded = dict_bytes + pages.iter().map(|(_, _, b)| b.len()).sum::<usize>();
        let zstd = self.options.zstd && encoded >= SMALL_CHUNK;
        let (mut uncompressed, mut compressed) = (0i64, 0i64);
        let mut dictionary_page_offset = None;
        let mut encodings = vec![RLE];
        if let Values::Dictionary { page, entries, .. } = &values {
            dictionary_page_offset = Some(out.len() as i64);
            let n = *entries as i32;
            let (u, c) = self.page(
                out,
                2,
                |s| {
                    s.structure(7, |d| {
                        d.i32(1, n).i32(2, PLAIN);
                    });
                },
                page,
                zstd,
            )?;
            uncompressed += u;
            compressed += c;
            encodings.extend([PLAIN, RLE_DICTIONARY]);
        } else {
            encodings.push(if matches!(values, Values::Delta) {
                DELTA_BINARY_PACKED
            } else {
                PLAIN
            });
        }
        let data_page_offset = out.len() as i64;
        for (levels_count, encoding, body) in &pages {
            let (u, c) = self.page(
                out,
                0,
                |s| {
                    s.structure(5, |d| {
                        d.i32(1, *levels_count)
                            .i32(2, *encoding)
                            .i32(3, RLE)
                            .i32(4, RLE);
                    });
                },
                body,
                zstd,
            )?;
            uncompressed += u;
            compressed += c;
        }
        let (levels, null_count) = (f.levels as i64, f.null_count);
        self.buffers.recycle(f, values, pages);
        Ok(ChunkMeta {
            zstd,
            encodings,
            num_values: levels,
            uncompressed,
            compressed,
            data_page_offset,
            dictionary_page_offset,
            null_count,
            min_max,
        })
    }

    fn choose_values(
        &mut self,
        spec: &ColumnSpec,
        f: &Flattened,
        dict_strings: Option<&[&str]>,
        int32: bool,
    ) -> Result<Values> {
        if let Some(dict) = dict_strings {
            // The dictionary page holds the strings used, in order of first use.
            let mut remap = vec![u64::MAX; dict.len()];
            let mut entries = 0usize;
            let mut page = Vec::new();
            let mut indices = reuse(&mut self.buffers.indices);
            for &k in f.keys.iter() {
                let slot = remap.get_mut(k as usize).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "column {}: key {k} beyond its dictionary",
                        spec.name
                    ))
                })?;
                if *slot == u64::MAX {
                    plain_str(&mut page, dict[k as usize].as_bytes());
                    *slot = entries as u64;
                    entries += 1;
                }
                indices.push(*slot);
            }
            return Ok(Values::Dictionary {
                page,
                entries,
                indices,
                bounds: None,
            });
        }
        if spec.encoding == Encoding::Delta {
            return Ok(Values::Delta);
        }
        let mut map: FastMap<i64, u64> = FastMap::default();
        let mut page = Vec::new();
        let mut indices = reuse(&mut self.buffers.indices);
        let mut bounds: Option<(i64, i64)> = None;
        // A direct-mapped cache of (value, index) before the map: columns cycle through a
        // few values (peers, sizes), whose lookups then cost a multiply and a compare.
        let mut cache = [(0i64, u64::MAX); 1 << CACHE_BITS];
        // (an index per value through `extend` of the slice's map: one capacity check, not
        // one per value; a dictionary grown too large stops growing and is dropped after)
        let mut too_large = false;
        indices.extend(f.ints.iter().map(|&v| {
            let slot =
                ((v as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - CACHE_BITS)) as usize;
            match cache[slot] {
                (cv, ci) if cv == v && ci != u64::MAX => ci,
                _ if too_large => 0,
                _ => {
                    let next = map.len() as u64;
                    let i = *map.entry(v).or_insert_with(|| {
                        plain_int(&mut page, v, int32);
                        bounds = Some(bounds.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
                        next
                    });
                    too_large = map.len() > DICT_LIMIT;
                    cache[slot] = (v, i);
                    i
                }
            }
        }));
        if too_large {
            return Ok(Values::Plain);
        }
        let entries = map.len();
        Ok(Values::Dictionary {
            page,
            entries,
            indices,
            bounds,
        })
    }

    /// Appends one page to `out` (`kind`: 0 data, 2 dictionary; `header` adds its typed
    /// header; `zstd`: compressed) and returns (uncompressed, compressed) bytes with the
    /// header.
    fn page(
        &mut self,
        out: &mut Vec<u8>,
        kind: i32,
        header: impl FnOnce(&mut Struct<'_>),
        body: &[u8],
        zstd: bool,
    ) -> Result<(i64, i64)> {
        let stored: &[u8] = if zstd {
            self.compressor.compress(body)
        } else {
            body
        };
        let mut head = Vec::new();
        let mut s = Struct::new(&mut head);
        s.i32(1, kind)
            .i32(2, body.len() as i32)
            .i32(3, stored.len() as i32);
        header(&mut s);
        s.end();
        out.extend_from_slice(&head);
        out.extend_from_slice(stored);
        Ok((
            (head.len() + body.len()) as i64,
            (head.len() + stored.len()) as i64,
        ))
    }
}

/// Levels as v1 data pages hold them: a 4-byte length, then the RLE hybrid.
fn levels(out: &mut Vec<u8>, levels: &[u64], max: u64) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    rle_hybrid(out, levels, width_of(max));
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// The least and greatest of `values` in one pass (None without values).
fn int_bounds(values: &[i64]) -> Option<(i64, i64)> {
    let first = *values.first()?;
    Some(
        values
            .iter()
            .fold((first, first), |(lo, hi), &v| (lo.min(v), hi.max(v))),
    )
}

/// `count` levels all equal to `level`, as one RLE run (see `levels`).
fn constant_levels(out: &mut Vec<u8>, count: usize, level: u64, max: u64) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    uleb(out, (count as u64) << 1);
    out.extend_from_slice(&level.to_le_bytes()[..width_of(max).div_ceil(8) as usize]);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// PLAIN-encoded min and max of the chunk's values (`bounds` of its integers).
fn min_max(
    f: &Flattened,
    bounds: Option<(i64, i64)>,
    dict: Option<&[&str]>,
    int32: bool,
) -> Option<(Vec<u8>, Vec<u8>)> {
    if let Some(dict) = dict {
        let mut used = vec![false; dict.len()];
        f.keys.iter().for_each(|&k| used[k as usize] = true);
        let strings = dict
            .iter()
            .zip(used)
            .filter_map(|(s, u)| u.then_some(s.as_bytes()));
        let lo = strings.clone().min()?;
        let hi = strings.max()?;
        return Some((lo.to_vec(), hi.to_vec()));
    }
    let (lo, hi) = bounds?;
    let enc = |v: i64| {
        let mut b = Vec::new();
        plain_int(&mut b, v, int32);
        b
    };
    Some((enc(lo), enc(hi)))
}
