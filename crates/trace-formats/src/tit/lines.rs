//! The lines of a TiT file, read 1 MiB at a time: memory stays bounded whatever the file's
//! size. UTF-8 is checked once per buffer of whole lines (a per-line check cost more than
//! the line's parse), and line ends are found with the memchr crate's SIMD search.
//! `for_chunks` gives the buffers unchecked (the scan of action names reads bytes).

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why `for_lines` stopped: the file could not be read, it is not text (at `line`), or
/// `each` failed.
pub(crate) enum LinesError<E> {
    Io(std::io::Error),
    NotText { line: u64 },
    Each(E),
}

impl<E> From<std::io::Error> for LinesError<E> {
    fn from(err: std::io::Error) -> Self {
        Self::Io(err)
    }
}

const BUFFER: usize = 1 << 20;

/// Calls `each(lines)` with the file's bytes a buffer of whole lines at a time (each but
/// the last ends with '\n'), in order.
pub(crate) fn for_chunks<E>(
    path: &Path,
    mut each: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), LinesError<E>> {
    let mut file = File::open(path)?;
    // Read into the vector's spare capacity (`read_to_end` of at most that much): a zeroed
    // buffer per file and pass cost ~1 % of a conversion's instructions.
    let mut buf: Vec<u8> = Vec::with_capacity(BUFFER);
    loop {
        let room = buf.capacity() - buf.len(); // > 0: the buffer grows before it is full
        let n = (&mut file).take(room as u64).read_to_end(&mut buf)?;
        // Whole lines of the buffer; at the end of the file, everything left.
        let whole = if n == 0 {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(k) => k + 1,
                None => {
                    if buf.len() == buf.capacity() {
                        buf.reserve(buf.len()); // a line longer than the buffer
                    }
                    continue;
                }
            }
        };
        if whole > 0 {
            each(&buf[..whole]).map_err(LinesError::Each)?;
        }
        if n == 0 {
            return Ok(());
        }
        buf.drain(..whole);
    }
}

/// Calls `each(line number, text)` for every line of `path` (without its '\n'; a last line
/// without '\n' too).
pub(crate) fn for_lines<E>(
    path: &Path,
    mut each: impl FnMut(u64, &str) -> Result<(), E>,
) -> Result<(), LinesError<E>> {
    let mut line = 0u64;
    for_chunks(path, |chunk| {
        let text = std::str::from_utf8(chunk).map_err(|err| {
            let before = &chunk[..err.valid_up_to()];
            LinesError::NotText {
                line: line + 1 + memchr::memchr_iter(b'\n', before).count() as u64,
            }
        })?;
        let mut start = 0;
        for k in memchr::memchr_iter(b'\n', text.as_bytes()) {
            line += 1;
            each(line, &text[start..k]).map_err(LinesError::Each)?;
            start = k + 1;
        }
        if start < text.len() {
            line += 1; // the last line, without '\n'
            each(line, &text[start..]).map_err(LinesError::Each)?;
        }
        Ok(())
    })
    .map_err(|err| match err {
        LinesError::Each(inner) => inner,
        LinesError::Io(err) => LinesError::Io(err),
        LinesError::NotText { line } => LinesError::NotText { line },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(bytes: &[u8]) -> Result<Vec<(u64, String)>, LinesError<()>> {
        let dir = std::env::temp_dir().join(format!("tit-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.txt", bytes.len()));
        std::fs::write(&path, bytes).unwrap();
        let mut out = Vec::new();
        let result = for_lines(&path, |n, text| {
            out.push((n, text.to_string()));
            Ok(())
        });
        std::fs::remove_file(&path).unwrap();
        result.map(|()| out)
    }

    #[test]
    fn numbers_lines_with_and_without_a_last_newline() {
        let got = lines_of(b"a\n\nb c\nd").ok().unwrap();
        let want = [(1, "a"), (2, ""), (3, "b c"), (4, "d")];
        assert_eq!(got, want.map(|(n, t)| (n, t.to_string())));
        assert_eq!(lines_of(b"a\n").ok().unwrap().len(), 1);
        assert!(lines_of(b"").ok().unwrap().is_empty());
    }

    #[test]
    fn lines_longer_than_the_buffer_and_across_reads() {
        let long = "x".repeat(BUFFER * 2 + 5);
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("{i}\n"));
        }
        text.push_str(&long);
        let got = lines_of(text.as_bytes()).ok().unwrap();
        assert_eq!(got.len(), 200_001);
        assert_eq!(got[123_456], (123_457, "123456".to_string()));
        assert_eq!(got[200_000].1.len(), long.len());
    }

    #[test]
    fn names_the_line_that_is_not_text() {
        match lines_of(b"0 init\n0 finalize\n0 \xff\n") {
            Err(LinesError::NotText { line }) => assert_eq!(line, 3),
            _ => panic!("invalid UTF-8 read"),
        }
    }
}
