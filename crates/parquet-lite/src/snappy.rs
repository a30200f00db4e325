//! Raw Snappy decompression (github.com/google/snappy, format_description.txt): pyarrow's
//! and DuckDB's default Parquet codec, so files written by other tools read too.

use crate::error::{corrupt, Result};

fn varint(data: &[u8], pos: &mut usize) -> Result<usize> {
    let mut value = 0usize;
    for shift in (0..35).step_by(7) {
        let Some(&b) = data.get(*pos) else {
            return corrupt("snappy length runs past the data");
        };
        *pos += 1;
        value |= usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    corrupt("snappy length too long")
}

fn le(data: &[u8], pos: usize, bytes: usize) -> Result<usize> {
    let Some(b) = data.get(pos..pos + bytes) else {
        return corrupt("snappy tag runs past the data");
    };
    Ok(b.iter()
        .rev()
        .fold(0usize, |acc, &x| (acc << 8) | usize::from(x)))
}

/// Decompresses one raw Snappy block.
pub(crate) fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    let mut pos = 0;
    let size = varint(data, &mut pos)?;
    if size > data.len().saturating_mul(256) + 64 {
        return corrupt(format!("snappy block claims {size} bytes"));
    }
    let mut out = Vec::with_capacity(size);
    while pos < data.len() {
        let tag = data[pos];
        pos += 1;
        let (len, offset) = match tag & 3 {
            0 => {
                let mut len = usize::from(tag >> 2);
                if len >= 60 {
                    let bytes = len - 59;
                    len = le(data, pos, bytes)?;
                    pos += bytes;
                }
                let len = len + 1;
                let Some(lit) = data.get(pos..pos + len) else {
                    return corrupt("snappy literal runs past the data");
                };
                out.extend_from_slice(lit);
                pos += len;
                continue;
            }
            1 => {
                let len = 4 + usize::from((tag >> 2) & 7);
                let offset = (usize::from(tag >> 5) << 8) | le(data, pos, 1)?;
                pos += 1;
                (len, offset)
            }
            2 => {
                let offset = le(data, pos, 2)?;
                pos += 2;
                (1 + usize::from(tag >> 2), offset)
            }
            _ => {
                let offset = le(data, pos, 4)?;
                pos += 4;
                (1 + usize::from(tag >> 2), offset)
            }
        };
        if offset == 0 || offset > out.len() {
            return corrupt("snappy copy before the start of the output");
        }
        let start = out.len() - offset;
        for i in 0..len {
            let b = out[start + i]; // copies may overlap their own output
            out.push(b);
        }
        if out.len() > size {
            return corrupt("snappy output longer than its header says");
        }
    }
    if out.len() != size {
        return corrupt(format!(
            "snappy output {} bytes, header says {size}",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn literals_and_overlapping_copies() {
        // "abcabcabcabcX": literal "abc", copy len 9 offset 3 (1-byte offset form), "X".
        let data = [13, 0b0000_1000, b'a', b'b', b'c', 0b0001_0101, 3, 0, b'X'];
        assert_eq!(super::decompress(&data).unwrap(), b"abcabcabcabcX");
        assert!(super::decompress(&[5, 0b0000_0101, 9]).is_err()); // copy before start
        assert!(super::decompress(&[9, 0, b'a']).is_err()); // too short
    }
}
