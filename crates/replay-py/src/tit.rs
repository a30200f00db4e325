//! `tailcast._core.TitReader`: SimGrid TiT files parsed natively (tit_parse.rs), a chunk of
//! rows at a time, as numpy columns for the Parquet writer (tailcast.traces.tit_import).

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::tit_lines::{for_chunks, LinesError};
use crate::tit_parse::{
    columns_of, count_ranks, LineError, Lists, Nullable, Rows, TitParser, OP_NAMES,
};

/// How many more ranks than lines with text a single-file TiT trace may name (count_ranks).
const RANK_SLACK: u64 = 4096;

fn line_error(err: LineError) -> PyErr {
    PyValueError::new_err((err.line, err.message))
}

fn read_error(line: u64, err: &std::io::Error) -> PyErr {
    if err.kind() == std::io::ErrorKind::InvalidData {
        PyValueError::new_err((line, "not a text TiT trace (invalid UTF-8)".to_string()))
    } else {
        PyValueError::new_err((line, err.to_string()))
    }
}

struct OpenFile {
    reader: BufReader<File>,
    line: u64,
    expect: Option<usize>,
    text: String,
}

/// Parses TiT files; see tailcast/_core.pyi.
#[pyclass(unsendable, module = "tailcast._core")]
pub struct TitReader {
    parser: TitParser,
    file: Option<OpenFile>,
}

fn nullable<'py, T: numpy::Element + Copy>(
    py: Python<'py>,
    out: &Bound<'py, PyDict>,
    name: &str,
    col: Nullable<T>,
) -> PyResult<()> {
    out.set_item(name, col.values.into_pyarray(py))?;
    out.set_item(format!("{name}_valid"), col.valid.into_pyarray(py))
}

fn lists<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, name: &str, col: Lists) -> PyResult<()> {
    let offsets: Vec<i32> = col
        .offsets
        .iter()
        .map(|&o| i32::try_from(o).map_err(|_| PyValueError::new_err((0u64, "list too long"))))
        .collect::<PyResult<_>>()?;
    out.set_item(format!("{name}_offsets"), offsets.into_pyarray(py))?;
    out.set_item(format!("{name}_values"), col.values.into_pyarray(py))?;
    out.set_item(format!("{name}_valid"), col.valid.into_pyarray(py))
}

#[pymethods]
impl TitReader {
    #[new]
    fn new(ranks: usize, flops_per_s: f64) -> PyResult<Self> {
        if flops_per_s.is_nan() || flops_per_s <= 0.0 {
            return Err(PyValueError::new_err("flops_per_s must be positive"));
        }
        Ok(Self {
            parser: TitParser::new(ranks, flops_per_s),
            file: None,
        })
    }

    /// Starts reading `path` (`expect_rank`: the rank of a per-rank file).
    #[pyo3(signature = (path, expect_rank = None))]
    fn open(&mut self, path: PathBuf, expect_rank: Option<usize>) -> PyResult<()> {
        let file = File::open(&path)?;
        self.file = Some(OpenFile {
            reader: BufReader::with_capacity(1 << 20, file),
            line: 0,
            expect: expect_rank,
            text: String::new(),
        });
        Ok(())
    }

    /// Parses lines of the open file until `max_rows` rows are ready or it ends; returns
    /// the rows' columns, or None when the file has ended and no rows are left.
    /// ValueError((line, message)) for a line that cannot be read.
    fn read<'py>(
        &mut self,
        py: Python<'py>,
        max_rows: usize,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(file) = self.file.as_mut() else {
            return Ok(None); // the file has ended (or none was opened)
        };
        while self.parser.rows.op.len() < max_rows {
            file.text.clear();
            file.line += 1;
            let n = file
                .reader
                .read_line(&mut file.text)
                .map_err(|err| read_error(file.line, &err))?;
            if n == 0 {
                self.file = None;
                break;
            }
            self.parser
                .line(&file.text, file.line, file.expect)
                .map_err(line_error)?;
        }
        if self.parser.rows.op.is_empty() {
            return Ok(None);
        }
        let rows = std::mem::take(&mut self.parser.rows);
        Ok(Some(Self::rows_dict(py, rows)?))
    }

    /// Calls of actions the importer does not map, by name.
    fn unsupported(&self) -> HashMap<String, u64> {
        self.parser.unsupported.clone()
    }

    /// The op names the `op` codes of `read` index.
    #[staticmethod]
    fn op_names() -> Vec<&'static str> {
        OP_NAMES.to_vec()
    }

    /// The ranks of a single-file trace (largest rank + 1; 0 for no actions).
    /// ValueError((line, message)) for a line not starting with a rank.
    #[staticmethod]
    fn count_ranks(path: PathBuf) -> PyResult<usize> {
        let mut reader = BufReader::with_capacity(1 << 20, File::open(&path)?);
        let (mut top, mut line, mut text) = (-1i64, 0u64, String::new());
        // Per-rank state is sized by the highest rank id, so the id is bounded by the file:
        // ranks without lines are allowed (SimGrid's reader accepts them) but at most
        // RANK_SLACK more than the lines with text. A fuzzed 9-line file naming rank
        // 76296000 made the reader allocate 6.7 GB.
        let (mut filled, mut top_line) = (0u64, 0u64);
        loop {
            text.clear();
            let n = reader
                .read_line(&mut text)
                .map_err(|err| read_error(line + 1, &err))?;
            if n == 0 {
                if top >= 0 && top as u64 >= filled + RANK_SLACK {
                    return Err(line_error(LineError {
                        line: top_line,
                        message: format!(
                            "rank {top} in a file of {filled} lines: more ranks than the \
                             file describes (at most its lines + {RANK_SLACK})"
                        ),
                    }));
                }
                return Ok((top + 1) as usize);
            }
            line += 1;
            filled += u64::from(!text.trim().is_empty());
            let before = top;
            count_ranks(&text, line, &mut top).map_err(line_error)?;
            if top != before {
                top_line = line;
            }
        }
    }

    /// The optional columns the actions of `paths` can set (a quick scan of the second
    /// token of every line; a name that is not UTF-8 sets none: its parse reports the line).
    #[staticmethod]
    fn columns(paths: Vec<PathBuf>) -> PyResult<Vec<&'static str>> {
        let mut actions = Actions::default();
        for path in paths {
            let scanned = for_chunks(&path, |lines| {
                actions.scan(lines);
                Ok::<(), ()>(())
            });
            if let Err(LinesError::Io(err)) = scanned {
                return Err(err.into());
            }
        }
        let found: BTreeSet<&'static str> = actions
            .names
            .iter()
            .filter_map(|a| std::str::from_utf8(a).ok())
            .flat_map(|a| columns_of(a).iter().copied())
            .collect();
        Ok(found.into_iter().collect())
    }
}

/// The distinct action names of a trace's lines: a few per trace. A name of up to 7 bytes
/// is also kept as one integer (its bytes and length), so most lines cost an integer
/// comparison, not a string one.
#[derive(Default)]
struct Actions {
    keys: Vec<u64>,
    names: Vec<Vec<u8>>,
}

const ONES: u64 = u64::MAX / 255;
const NEWLINES: u64 = ONES * b'\n' as u64;

/// 8 bytes as one little-endian integer.
fn word(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(b)
}

/// The index of the first byte of `w` below `limit` (at most 0x80; 8 when none): SWAR's
/// "has less" test, whose borrows only mark bytes after the first such byte.
fn first_below(w: u64, limit: u8) -> usize {
    let marks = w.wrapping_sub(ONES * u64::from(limit)) & !w & (ONES * 0x80);
    (marks.trailing_zeros() / 8) as usize
}

/// The index of the first '\n' of `lines` from `i` (`lines.len()` when none), 8 bytes at
/// a time: the arguments after an action are a few bytes, too few for memchr's set-up.
fn line_end(lines: &[u8], mut i: usize) -> usize {
    while let Some(bytes) = lines.get(i..i + 8) {
        let k = first_below(word(bytes) ^ NEWLINES, 1);
        if k < 8 {
            return i + k;
        }
        i += 8;
    }
    memchr::memchr(b'\n', &lines[i..]).map_or(lines.len(), |k| i + k)
}

impl Actions {
    fn add(&mut self, name: &[u8]) {
        if !self.names.iter().any(|n| n == name) {
            self.names.push(name.to_vec());
        }
    }

    /// Adds the actions of `lines` (whole lines). The usual line, `<rank> <action>[
    /// <arguments>]` with a rank and an action of up to 7 bytes each, is read a word at
    /// a time (ASCII whitespace is below b'!'); any other takes the general tokeniser
    /// (`second_token`).
    fn scan(&mut self, lines: &[u8]) {
        let n = lines.len();
        let mut i = 0;
        while i < n {
            let start = i;
            // The rank: up to 7 bytes above b' ' then a space, found in one word (a loop
            // over its digits cost a tenth of the scan). Any such token is the first of
            // the line, as `second_token` reads it.
            let rank = if start + 8 <= n {
                first_below(word(&lines[start..]), b'!')
            } else {
                0
            };
            let first = start + rank + 1;
            if (1..8).contains(&rank) && first + 8 <= n && lines[start + rank] == b' ' {
                let w = word(&lines[first..]);
                let len = first_below(w, b'!');
                if (1..8).contains(&len) && matches!(lines[first + len], b' ' | b'\n') {
                    let key = (w & ((1u64 << (8 * len)) - 1)) | (len as u64) << 56;
                    if !self.keys.contains(&key) {
                        self.keys.push(key);
                        self.add(&lines[first..first + len]);
                    }
                    i = line_end(lines, first + len) + 1;
                    continue;
                }
            }
            let end = line_end(lines, start);
            if let Some(action) = second_token(&lines[start..end]) {
                self.add(action);
            }
            i = end + 1;
        }
    }
}

/// The second whitespace-separated token of `line` (its action, after the rank).
fn second_token(line: &[u8]) -> Option<&[u8]> {
    let space = |b: &u8| b.is_ascii_whitespace();
    let first = line.iter().position(|b| !space(b))?;
    let gap = first + line[first..].iter().position(space)?;
    let start = gap + line[gap..].iter().position(|b| !space(b))?;
    let len = line[start..]
        .iter()
        .position(space)
        .unwrap_or(line.len() - start);
    Some(&line[start..start + len])
}

impl TitReader {
    fn rows_dict(py: Python<'_>, rows: Rows) -> PyResult<Bound<'_, PyDict>> {
        let out = PyDict::new(py);
        out.set_item("rank", rows.rank.into_pyarray(py))?;
        out.set_item("seq", rows.seq.into_pyarray(py))?;
        out.set_item("op", rows.op.into_pyarray(py))?;
        out.set_item("time_ns", rows.time_ns.into_pyarray(py))?;
        nullable(py, &out, "peer", rows.peer)?;
        nullable(py, &out, "root", rows.root)?;
        nullable(py, &out, "tag", rows.tag)?;
        nullable(py, &out, "send_bytes", rows.send_bytes)?;
        nullable(py, &out, "recv_bytes", rows.recv_bytes)?;
        nullable(py, &out, "request", rows.request)?;
        nullable(py, &out, "dtype_bytes", rows.dtype_bytes)?;
        lists(py, &out, "requests", rows.requests)?;
        lists(py, &out, "send_counts", rows.send_counts)?;
        lists(py, &out, "recv_counts", rows.recv_counts)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Actions;

    #[test]
    fn actions_of_usual_and_unusual_lines() {
        let cases: [(&[u8], &[&str]); 12] = [
            (b"0 init", &["init"]),
            (b"12 send 3 8192 1\n12 send 3 1 1\n", &["send"]),
            (b"  3\t waitall \n", &["waitall"]),
            (b"0 finalize\r\n", &["finalize"]),
            (b"0 comp\x0bute 1", &["comp\x0bute"]),
            (b"0  recv 1 2", &["recv"]),
            (b"r0 bcast 5\n0 bcast\n", &["bcast"]),
            (b"0 \xc3\xa9 1", &["\u{e9}"]),
            (b"0 \n0\n\n", &[]),
            (
                b"0 a_name_longer_than_15\n1 a_name_longer_than_15 2",
                &["a_name_longer_than_15"],
            ),
            (b"0 isend 1\n0 irecv 1\n0 isend 2\n", &["isend", "irecv"]),
            (b"", &[]),
        ];
        for (lines, want) in cases {
            // As the last lines of a buffer (the bytewise path) and followed by others
            // (the word path).
            let mut actions = Actions::default();
            actions.scan(lines);
            let mut longer = lines.to_vec();
            longer.extend_from_slice(&[b'\n'; 40]);
            let mut more = Actions::default();
            more.scan(&longer);
            assert_eq!(
                more.names,
                actions.names,
                "{:?}",
                String::from_utf8_lossy(lines)
            );
            let got: Vec<&str> = actions
                .names
                .iter()
                .map(|n| std::str::from_utf8(n).unwrap())
                .collect();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(lines));
        }
    }
}
