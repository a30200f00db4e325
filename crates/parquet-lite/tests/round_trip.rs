//! Files the writer writes read back through the reader, value for value.

use std::sync::Arc;

use parquet_lite::{
    ColumnData, ColumnSpec, Encoding, ParquetFile, ValueKind, Values, WriteOptions, Writer,
};

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn written_files_read_back() {
    let dir = std::env::temp_dir().join(format!("parquet-lite-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 5u64;
    for case in 0..40 {
        let rows = (xorshift(&mut seed) % 3000) as usize;
        let ints: Vec<i64> = (0..rows)
            .map(|i| {
                if case % 3 == 0 {
                    i as i64
                } else {
                    (xorshift(&mut seed) % 50) as i64 - 7
                }
            })
            .collect();
        let valid: Vec<bool> = (0..rows)
            .map(|_| !xorshift(&mut seed).is_multiple_of(5))
            .collect();
        let dict = ["isend", "irecv", "waitall", "init"];
        let keys: Vec<u32> = (0..rows)
            .map(|_| (xorshift(&mut seed) % 4) as u32)
            .collect();
        let mut offsets = vec![0i64];
        let mut items = Vec::new();
        for _ in 0..rows {
            for _ in 0..xorshift(&mut seed) % 4 {
                items.push((xorshift(&mut seed) % 1000) as i64);
            }
            offsets.push(items.len() as i64);
        }
        let specs = vec![
            ColumnSpec {
                name: "a".into(),
                kind: ValueKind::Int {
                    bits: if case % 3 == 0 {
                        64
                    } else {
                        8 * (1 + case % 8) as u8
                    },
                },
                nullable: true,
                encoding: Encoding::Dictionary,
            },
            ColumnSpec {
                name: "b".into(),
                kind: ValueKind::Int { bits: 64 },
                nullable: false,
                encoding: Encoding::Delta,
            },
            // The same data as "b": its chunks repeat b's pages.
            ColumnSpec {
                name: "b2".into(),
                kind: ValueKind::Int { bits: 64 },
                nullable: false,
                encoding: Encoding::Delta,
            },
            ColumnSpec {
                name: "op".into(),
                kind: ValueKind::String,
                nullable: false,
                encoding: Encoding::Dictionary,
            },
            ColumnSpec {
                name: "l".into(),
                kind: ValueKind::IntList { bits: 64 },
                nullable: true,
                encoding: Encoding::Delta,
            },
        ];
        let path = dir.join(format!("t{case}.parquet"));
        let options = WriteOptions {
            page_rows: 1 + (case * 97) % 700,
            zstd: case % 2 == 0,
        };
        let mut w = Writer::create(&path, specs, options).unwrap();
        let group = 1 + (xorshift(&mut seed) % 1500) as usize;
        let mut start = 0;
        while start < rows {
            let end = (start + group).min(rows);
            let lists_off: Vec<i64> = offsets[start..=end]
                .iter()
                .map(|&o| o - offsets[start])
                .collect();
            let lists_val = &items[offsets[start] as usize..offsets[end] as usize];
            w.write_row_group(
                end - start,
                &[
                    ColumnData::Ints {
                        values: &ints[start..end],
                        valid: Some(&valid[start..end]),
                    },
                    ColumnData::Ints {
                        values: &ints[start..end],
                        valid: None,
                    },
                    ColumnData::Ints {
                        values: &ints[start..end],
                        valid: None,
                    },
                    ColumnData::Strings {
                        keys: &keys[start..end],
                        dict: &dict,
                        valid: None,
                    },
                    ColumnData::Lists {
                        offsets: &lists_off,
                        values: lists_val,
                        valid: Some(&valid[start..end]),
                    },
                ],
            )
            .unwrap();
            start = end;
        }
        w.set_key_value("tailcast.table", "traces");
        w.finish().unwrap();
        let file = Arc::new(ParquetFile::open(&path).unwrap());
        assert_eq!(file.num_rows(), rows as u64);
        assert_eq!(file.key_value("tailcast.table"), Some("traces"));
        let groups = file.num_row_groups();
        let read = |name: &str| file.cursor(name, 0, groups).unwrap().unwrap();
        let mut a = read("a");
        let col = a.read(rows + 1).unwrap();
        assert_eq!(col.rows, rows, "case {case}");
        let Values::Ints(got) = &col.values else {
            panic!()
        };
        for i in 0..rows {
            assert_eq!(col.is_valid(i), valid[i], "case {case} row {i}");
            if valid[i] {
                assert_eq!(got[i], ints[i], "case {case} row {i}");
            }
        }
        let Values::Ints(b2) = read("b2").read(rows).unwrap().values else {
            panic!()
        };
        assert_eq!(b2, ints, "case {case}");
        let Values::Ints(got) = read("b").read(rows).unwrap().values else {
            panic!()
        };
        assert_eq!(got, ints, "case {case}");
        let mut op = read("op");
        let col = op.read(rows).unwrap();
        let Values::Strings(got) = &col.values else {
            panic!()
        };
        let names: Vec<&[u8]> = got
            .iter()
            .map(|&k| op.dictionary()[k as usize].as_slice())
            .collect();
        let want: Vec<&[u8]> = keys.iter().map(|&k| dict[k as usize].as_bytes()).collect();
        assert_eq!(names, want, "case {case}");
        let col = read("l").read(rows).unwrap();
        let Values::Lists {
            offsets: o,
            values: v,
        } = &col.values
        else {
            panic!()
        };
        for i in 0..rows {
            assert_eq!(col.is_valid(i), valid[i]);
            let got = &v[o[i] as usize..o[i + 1] as usize];
            let want = if valid[i] {
                &items[offsets[i] as usize..offsets[i + 1] as usize]
            } else {
                &[][..]
            };
            assert_eq!(got, want, "case {case} row {i}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cursors_started_anywhere_read_the_same_rows() {
    let dir = std::env::temp_dir().join(format!("parquet-lite-skip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 9u64;
    let rows = 5000;
    let ints: Vec<i64> = (0..rows)
        .map(|i| i as i64 * 7 + (xorshift(&mut seed) % 3) as i64)
        .collect();
    let valid: Vec<bool> = (0..rows)
        .map(|_| !xorshift(&mut seed).is_multiple_of(4))
        .collect();
    let keys: Vec<u32> = (0..rows)
        .map(|_| (xorshift(&mut seed) % 3) as u32)
        .collect();
    let dict = ["a", "bb", "ccc"];
    let specs = vec![
        ColumnSpec {
            name: "d".into(),
            kind: ValueKind::Int { bits: 64 },
            nullable: true,
            encoding: Encoding::Delta,
        },
        ColumnSpec {
            name: "k".into(),
            kind: ValueKind::String,
            nullable: false,
            encoding: Encoding::Dictionary,
        },
    ];
    let path = dir.join("skip.parquet");
    let mut w = Writer::create(
        &path,
        specs,
        WriteOptions {
            page_rows: 300,
            zstd: true,
        },
    )
    .unwrap();
    for (a, b) in [(0, 1700), (1700, 1800), (1800, rows)] {
        w.write_row_group(
            b - a,
            &[
                ColumnData::Ints {
                    values: &ints[a..b],
                    valid: Some(&valid[a..b]),
                },
                ColumnData::Strings {
                    keys: &keys[a..b],
                    dict: &dict,
                    valid: None,
                },
            ],
        )
        .unwrap();
    }
    w.finish().unwrap();
    let file = Arc::new(ParquetFile::open(&path).unwrap());
    let groups = file.num_row_groups();
    for start in [0u64, 1, 299, 300, 301, 1699, 1700, 1750, 1800, 4999] {
        let n = 400;
        let mut d = file.cursor("d", start, groups).unwrap().unwrap();
        let col = d.read(n).unwrap();
        let Values::Ints(got) = &col.values else {
            panic!()
        };
        for (i, row) in (start as usize..(start as usize + n).min(rows)).enumerate() {
            assert_eq!(col.is_valid(i), valid[row], "start {start} row {row}");
            if valid[row] {
                assert_eq!(got[i], ints[row], "start {start} row {row}");
            }
        }
        let mut k = file.cursor("k", start, groups).unwrap().unwrap();
        let col = k.read(n).unwrap();
        let Values::Strings(got) = &col.values else {
            panic!()
        };
        let want: Vec<&[u8]> = keys[start as usize..(start as usize + n).min(rows)]
            .iter()
            .map(|&x| dict[x as usize].as_bytes())
            .collect();
        let names: Vec<&[u8]> = got
            .iter()
            .map(|&x| k.dictionary()[x as usize].as_slice())
            .collect();
        assert_eq!(names, want, "start {start}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_dictionary_too_large_falls_back_to_plain() {
    let dir = std::env::temp_dir().join(format!("parquet-lite-plain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plain.parquet");
    // More distinct values than a dictionary takes (1 << 16), then repeats of them.
    let rows = 100_000;
    let ints: Vec<i64> = (0..rows).map(|i| (i % 70_000) as i64 * 3 - 5).collect();
    let spec = ColumnSpec {
        name: "v".into(),
        kind: ValueKind::Int { bits: 64 },
        nullable: false,
        encoding: Encoding::Dictionary,
    };
    let options = WriteOptions {
        page_rows: 8192,
        zstd: true,
    };
    let mut w = Writer::create(&path, vec![spec], options).unwrap();
    let column = ColumnData::Ints {
        values: &ints,
        valid: None,
    };
    w.write_row_group(rows, &[column]).unwrap();
    w.finish().unwrap();
    let file = Arc::new(ParquetFile::open(&path).unwrap());
    let Values::Ints(got) = file
        .cursor("v", 0, 1)
        .unwrap()
        .unwrap()
        .read(rows)
        .unwrap()
        .values
    else {
        panic!()
    };
    assert_eq!(got, ints);
    std::fs::remove_dir_all(&dir).ok();
}

/// Writes one non-null integer column of `bits` bits and reads it back.
fn write_and_read(
    path: &std::path::Path,
    values: &[i64],
    bits: u8,
    encoding: Encoding,
) -> Vec<i64> {
    let spec = ColumnSpec {
        name: "v".into(),
        kind: ValueKind::Int { bits },
        nullable: false,
        encoding,
    };
    let options = WriteOptions {
        page_rows: 1000,
        zstd: false,
    };
    let mut w = Writer::create(path, vec![spec], options).unwrap();
    let column = ColumnData::Ints {
        values,
        valid: None,
    };
    w.write_row_group(values.len(), &[column]).unwrap();
    w.finish().unwrap();
    let file = Arc::new(ParquetFile::open(path).unwrap());
    let Values::Ints(got) = file
        .cursor("v", 0, 1)
        .unwrap()
        .unwrap()
        .read(values.len())
        .unwrap()
        .values
    else {
        panic!()
    };
    got
}

/// The RLE/bit-packed hybrid of dictionary indices of every width a dictionary takes (1 to
/// 16 bits: up to 1 << 16 entries), in runs and in bit-packed stretches, as the parquet
/// crate decodes it.
#[test]
fn dictionary_indices_of_every_width_read_back() {
    let dir = std::env::temp_dir().join(format!("parquet-lite-rle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 7u64;
    for width in 1..=16u32 {
        let distinct = 1u64 << width;
        let mut values: Vec<i64> = (0..distinct as i64).collect(); // every entry once
        while values.len() < 3000 {
            let v = (xorshift(&mut seed) % distinct) as i64;
            let run = 1 + (xorshift(&mut seed) % 20) as usize;
            values.extend(std::iter::repeat_n(v, run));
        }
        let path = dir.join(format!("w{width}.parquet"));
        let got = write_and_read(&path, &values, 32, Encoding::Dictionary);
        assert_eq!(got, values, "width {width}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// DELTA_BINARY_PACKED in both widths: counters, full-range values (whose deltas
/// overflow and wrap) and small noise.
#[test]
fn delta_values_read_back_in_both_widths() {
    let dir = std::env::temp_dir().join(format!("parquet-lite-delta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed = 11u64;
    for case in 0..40 {
        let n = (xorshift(&mut seed) % 2500) as usize;
        let bits32 = case % 2 == 0;
        let values: Vec<i64> = (0..n)
            .map(|i| {
                let v = match case % 4 {
                    0 => i as i64 * 3,
                    1 => xorshift(&mut seed) as i64,
                    _ => (xorshift(&mut seed) % 1000) as i64 - 500,
                };
                if bits32 {
                    i64::from(v as i32)
                } else {
                    v
                }
            })
            .collect();
        let path = dir.join(format!("d{case}.parquet"));
        let got = write_and_read(
            &path,
            &values,
            if bits32 { 32 } else { 64 },
            Encoding::Delta,
        );
        assert_eq!(got, values, "case {case}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
