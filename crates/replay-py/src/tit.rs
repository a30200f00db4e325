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

use crate::tit_lines::{for_lines, LinesError};
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
    /// token of every line). A file that is not text is scanned up to that line: its parse
    /// reports the line.
    #[staticmethod]
    fn columns(paths: Vec<PathBuf>) -> PyResult<Vec<&'static str>> {
        // The distinct action names: a few per trace, kept as integer keys (name_key), so
        // the scan compares integers, not strings, per line.
        let mut keys: Vec<u128> = Vec::new();
        let mut actions: Vec<String> = Vec::new();
        for path in paths {
            let scanned = for_lines(&path, |_, text| {
                if let Some(action) = second_token(text) {
                    let known = match name_key(action.as_bytes()) {
                        Some(key) if keys.contains(&key) => true,
                        Some(key) => {
                            keys.push(key);
                            false
                        }
                        None => actions.iter().any(|a| a == action),
                    };
                    if !known {
                        actions.push(action.to_string());
                    }
                }
                Ok::<(), ()>(())
            });
            match scanned {
                Err(LinesError::Io(err)) => return Err(err.into()),
                Ok(()) | Err(LinesError::NotText { .. } | LinesError::Each(())) => {}
            }
        }
        let found: BTreeSet<&'static str> = actions
            .iter()
            .flat_map(|a| columns_of(a).iter().copied())
            .collect();
        Ok(found.into_iter().collect())
    }
}

/// An action name as one integer (its length and up to 15 bytes; None when longer): the
/// scan compares integers, not strings.
fn name_key(name: &[u8]) -> Option<u128> {
    let mut bytes = [0u8; 16];
    bytes.get_mut(1..=name.len())?.copy_from_slice(name);
    bytes[0] = name.len() as u8;
    Some(u128::from_le_bytes(bytes))
}

/// The second whitespace-separated token of `line` (its action, after the rank).
fn second_token(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    // The usual line, `<rank digits> <action>[ <arguments>]`, in one pass over the digits
    // and the action's bytes (ASCII whitespace is at most b' '); any other whitespace
    // takes the general scan below.
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && bytes.get(digits) == Some(&b' ') {
        let rest = &bytes[digits + 1..];
        let len = rest.iter().position(|&b| b <= b' ').unwrap_or(rest.len());
        if len > 0 && rest.get(len).is_none_or(|&b| b == b' ') {
            return Some(&line[digits + 1..digits + 1 + len]);
        }
    }
    let space = |b: &u8| b.is_ascii_whitespace();
    let first = bytes.iter().position(|b| !space(b))?;
    let gap = first + bytes[first..].iter().position(space)?;
    let start = gap + bytes[gap..].iter().position(|b| !space(b))?;
    let len = bytes[start..]
        .iter()
        .position(space)
        .unwrap_or(bytes.len() - start);
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
    use super::second_token;

    #[test]
    fn second_token_of_usual_and_unusual_lines() {
        let cases = [
            ("0 init", Some("init")),
            ("12 send 3 8192 1", Some("send")),
            ("  3\t waitall ", Some("waitall")),
            ("0 finalize\r", Some("finalize")),
            ("0 comp\x0bute 1", Some("comp\x0bute")),
            ("0  recv 1 2", Some("recv")),
            ("r0 bcast 5", Some("bcast")),
            ("0 é 1", Some("é")),
            ("0 ", None),
            ("0", None),
            ("", None),
        ];
        for (line, want) in cases {
            assert_eq!(second_token(line), want, "{line:?}");
        }
    }
}
