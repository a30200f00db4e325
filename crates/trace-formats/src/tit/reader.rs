//! A TiT file read a chunk of rows at a time (`Reader`), and the rank count of a
//! single-file trace (`ranks_in_file`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::parse::{count_ranks, LineError, TitParser};
use crate::columns::Rows;

/// How many more ranks than lines with text a single-file TiT trace may name.
const RANK_SLACK: u64 = 4096;

/// Why a file could not be read: it could not be opened, or a line (numbered) could not be
/// read or parsed.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    Line(LineError),
}

/// A read failure at `line` as a line error (a file that is not UTF-8 is not a TiT trace).
fn read_error(line: u64, err: &std::io::Error) -> LineError {
    let message = if err.kind() == std::io::ErrorKind::InvalidData {
        "not a text TiT trace (invalid UTF-8)".to_string()
    } else {
        err.to_string()
    };
    LineError { line, message }
}

struct OpenFile {
    reader: BufReader<File>,
    line: u64,
    expect: Option<usize>,
    text: String,
}

/// Reads TiT files of one trace one after the other (per-rank files, or one file with every
/// rank): each `read` gives the next rows of the open file.
pub struct Reader {
    parser: TitParser,
    file: Option<OpenFile>,
}

impl Reader {
    /// A reader of a trace of `ranks` ranks (`flops_per_s` as `TitParser::new` takes it).
    pub fn new(ranks: usize, flops_per_s: f64) -> Result<Self, String> {
        Ok(Self {
            parser: TitParser::new(ranks, flops_per_s)?,
            file: None,
        })
    }

    /// Starts reading `path` (`expect_rank`: the rank of a per-rank file).
    pub fn open(&mut self, path: &Path, expect_rank: Option<usize>) -> std::io::Result<()> {
        let file = File::open(path)?;
        self.file = Some(OpenFile {
            reader: BufReader::with_capacity(1 << 20, file),
            line: 0,
            expect: expect_rank,
            text: String::new(),
        });
        Ok(())
    }

    /// Parses lines of the open file until `max_rows` rows are ready or it ends; returns the
    /// rows, or None when the file has ended and no rows are left.
    pub fn read(&mut self, max_rows: usize) -> Result<Option<Rows>, LineError> {
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
            self.parser.line(&file.text, file.line, file.expect)?;
        }
        if self.parser.rows.op.is_empty() {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut self.parser.rows)))
    }

    /// Calls of actions the importer does not map, by name, over every file read.
    pub fn unsupported(&self) -> &HashMap<String, u64> {
        &self.parser.unsupported
    }
}

/// The ranks of a single-file trace (largest rank + 1; 0 for no actions); an error names
/// the first line not starting with a rank.
pub fn ranks_in_file(path: &Path) -> Result<usize, ReadError> {
    let file = File::open(path).map_err(ReadError::Io)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
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
            .map_err(|err| ReadError::Line(read_error(line + 1, &err)))?;
        if n == 0 {
            if top >= 0 && top as u64 >= filled + RANK_SLACK {
                return Err(ReadError::Line(LineError {
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
        count_ranks(&text, line, &mut top).map_err(ReadError::Line)?;
        if top != before {
            top_line = line;
        }
    }
}
