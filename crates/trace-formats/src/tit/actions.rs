//! The optional TRACE columns a TiT trace's actions can set (`optional_columns`), found by
//! a quick scan of every line's second token: a file whose actions set none of a column
//! leaves it out.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::lines::{for_chunks, LinesError};
use super::parse::columns_of;

/// The optional columns the actions of `paths` can set, sorted (a name that is not UTF-8
/// sets none: its parse reports the line).
pub fn optional_columns(paths: &[PathBuf]) -> std::io::Result<Vec<&'static str>> {
    let mut actions = Actions::default();
    for path in paths {
        let scanned = for_chunks(path, |lines| {
            actions.scan(lines);
            Ok::<(), ()>(())
        });
        if let Err(LinesError::Io(err)) = scanned {
            return Err(err);
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
