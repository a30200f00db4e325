//! TiT files read (`Reader`, `ranks_in_file`, `optional_columns`) and converted to Parquet
//! trace files (`Converter`, read back with parquet-lite).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet_lite::{ParquetFile, Values};
use trace_formats::columns::Rows;
use trace_formats::tit::{
    optional_columns, ranks_in_file, ConvertError, Converter, Layout, ReadError, Reader, TitParser,
    OP_NAMES,
};

/// Three ranks in one file, their lines interleaved as SimGrid writes a single-file trace:
/// a point-to-point exchange after 1e6 flops, a wait, a broadcast.
const TRACE: &str = "\
# a comment
0 init
1 init
2 init
0 compute 1e6
0 isend 1 5 1024
1 irecv 0 5 1024
0 waitall
1 wait
2 bcast 64 0

0 bcast 64 0
1 bcast 64 0
0 finalize
1 finalize
2 finalize
";

fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// One line per row of the optional values that are set.
fn described(rows: &Rows) -> Vec<String> {
    (0..rows.op.len())
        .map(|i| {
            let mut s = format!(
                "{} {} {} t={}",
                rows.rank[i], rows.seq[i], OP_NAMES[rows.op[i] as usize], rows.time_ns[i]
            );
            for (name, col) in [
                ("peer", &rows.peer),
                ("root", &rows.root),
                ("tag", &rows.tag),
                ("send", &rows.send_bytes),
                ("recv", &rows.recv_bytes),
                ("request", &rows.request),
                ("dtype", &rows.dtype_bytes),
            ] {
                if col.valid[i] {
                    s += &format!(" {name}={}", col.values[i]);
                }
            }
            let l = &rows.requests;
            if l.valid[i] {
                let (lo, hi) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
                s += &format!(" requests={:?}", &l.values[lo..hi]);
            }
            s
        })
        .collect()
}

fn read_all(path: &Path, max_rows: usize) -> Vec<String> {
    let mut reader = Reader::new(3, 1e9).unwrap();
    reader.open(path, None).unwrap();
    let mut out = Vec::new();
    while let Some(rows) = reader.read(max_rows).unwrap() {
        assert!(rows.op.len() <= max_rows);
        out.extend(described(&rows));
    }
    out
}

#[test]
fn rows_do_not_depend_on_the_chunk_size() {
    let dir = common::scratch_dir("tit-chunks");
    let path = write(&dir, "t.txt", TRACE.as_bytes());
    let whole = read_all(&path, usize::MAX);
    assert_eq!(
        whole[..7],
        [
            "0 0 init t=0",
            "1 0 init t=0",
            "2 0 init t=0",
            // 1e6 flops at 1e9 flops/s: 1 ms on rank 0's clock
            "0 1 isend t=1000000 peer=1 tag=5 send=1024 request=0",
            "1 1 irecv t=0 peer=0 tag=5 recv=1024 request=0",
            "0 2 waitall t=1000000 requests=[0]",
            "1 2 wait t=0 request=0",
        ]
    );
    assert_eq!(whole[7], "2 1 bcast t=0 root=0 send=64 dtype=1");
    assert_eq!(whole.len(), 13);
    for chunk in [1, 2, 5] {
        assert_eq!(read_all(&path, chunk), whole, "chunks of {chunk}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn lines_that_cannot_be_read_are_named() {
    let dir = common::scratch_dir("tit-errors");
    let mut reader = Reader::new(2, 1e9).unwrap();
    reader
        .open(&write(&dir, "r0.txt", b"0 init\n1 init\n"), Some(0))
        .unwrap();
    let err = reader.read(100).err().unwrap();
    assert_eq!(
        (err.line, err.message.as_str()),
        (2, "rank 1 does not belong here")
    );
    reader
        .open(&write(&dir, "bin.txt", b"0 init\n0 \xff\n"), None)
        .unwrap();
    let err = reader.read(100).err().unwrap();
    assert_eq!(err.line, 2);
    assert_eq!(err.message, "not a text TiT trace (invalid UTF-8)");
    assert!(reader.open(&dir.join("missing.txt"), None).is_err());
    assert_eq!(
        Reader::new(2, 0.0).err().unwrap(),
        "flops_per_s must be positive"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn rank_counts_are_bounded_by_the_file() {
    let dir = common::scratch_dir("tit-ranks");
    assert_eq!(
        ranks_in_file(&write(&dir, "t.txt", TRACE.as_bytes())).unwrap(),
        3
    );
    assert_eq!(ranks_in_file(&write(&dir, "empty.txt", b"")).unwrap(), 0);
    // Found by the fuzz bench: a bare rank id far beyond the file's lines sized the
    // per-rank state by it (6.7 GB).
    let text = "0 init\n0 send 1 0 1e7\n0 barrier\n0 compute 98095000\n2 init\n1 init\n\
                1 ralize\n 76296000\n\n";
    match ranks_in_file(&write(&dir, "fuzz.txt", text.as_bytes())) {
        Err(ReadError::Line(e)) => {
            assert_eq!(e.line, 8);
            assert!(
                e.message.starts_with("rank 76296000 in a file of 8 lines"),
                "{e:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    match ranks_in_file(&write(&dir, "bad.txt", b"0 init\nx init\n")) {
        Err(ReadError::Line(e)) => assert_eq!(
            (e.line, e.message.as_str()),
            (2, "expected a rank, got \"x\"")
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ranks_in_file(&dir.join("missing.txt")),
        Err(ReadError::Io(_))
    ));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn optional_columns_are_those_the_actions_set() {
    let dir = common::scratch_dir("tit-columns");
    let paths = [
        write(&dir, "a.txt", TRACE.as_bytes()),
        write(&dir, "b.txt", b"0 alltoallv 16 8 8 16 8 8\n"),
    ];
    let want = [
        "dtype_bytes",
        "peer",
        "recv_bytes",
        "request",
        "requests",
        "root",
    ];
    let got = optional_columns(&paths[..1]).unwrap();
    assert_eq!(got, [&want[..], &["send_bytes", "tag"]].concat());
    let got = optional_columns(&paths).unwrap();
    assert!(got.contains(&"send_counts") && got.contains(&"recv_counts"));
    assert!(optional_columns(&[dir.join("missing.txt")]).is_err());
    std::fs::remove_dir_all(dir).unwrap();
}

const COLUMNS: [&str; 14] = [
    "rank",
    "seq",
    "op",
    "comm",
    "t_start_ns",
    "t_end_ns",
    "peer",
    "root",
    "tag",
    "send_bytes",
    "recv_bytes",
    "request",
    "dtype_bytes",
    "requests",
];

fn layout(group_rows: usize) -> Layout {
    Layout {
        columns: COLUMNS.iter().map(|c| c.to_string()).collect(),
        delta_columns: vec!["seq".into(), "t_start_ns".into()],
        group_rows,
        page_rows: 2,
    }
}

/// The rows of a Parquet trace file, described as `described` describes parsed rows.
fn rows_of_file(path: &Path) -> (Vec<String>, Arc<ParquetFile>) {
    let file = Arc::new(ParquetFile::open(path).unwrap());
    let rows = file.num_rows() as usize;
    let mut columns = HashMap::new();
    let mut ops = Vec::new();
    for name in COLUMNS {
        let mut cursor = file
            .cursor(name, 0, file.num_row_groups())
            .unwrap()
            .unwrap();
        let col = cursor.read(rows).unwrap();
        assert_eq!(col.rows, rows, "{name}");
        if name == "op" {
            let Values::Strings(keys) = &col.values else {
                panic!("op")
            };
            let dict = cursor.dictionary();
            ops = keys
                .iter()
                .map(|&k| String::from_utf8(dict[k as usize].clone()).unwrap())
                .collect();
        }
        columns.insert(name, col);
    }
    let ints = |name: &str, i: usize| -> Option<i64> {
        let col = &columns[name];
        let Values::Ints(v) = &col.values else {
            panic!("{name}")
        };
        col.is_valid(i).then_some(v[i])
    };
    let described = (0..rows)
        .map(|i| {
            assert_eq!(ints("comm", i), Some(0));
            assert_eq!(ints("t_start_ns", i), ints("t_end_ns", i));
            let mut s = format!(
                "{} {} {} t={}",
                ints("rank", i).unwrap(),
                ints("seq", i).unwrap(),
                ops[i],
                ints("t_start_ns", i).unwrap()
            );
            for (name, short) in [
                ("peer", "peer"),
                ("root", "root"),
                ("tag", "tag"),
                ("send_bytes", "send"),
                ("recv_bytes", "recv"),
                ("request", "request"),
                ("dtype_bytes", "dtype"),
            ] {
                if let Some(v) = ints(name, i) {
                    s += &format!(" {short}={v}");
                }
            }
            let col = &columns["requests"];
            let Values::Lists { offsets, values } = &col.values else {
                panic!("requests")
            };
            if col.is_valid(i) {
                let (lo, hi) = (offsets[i] as usize, offsets[i + 1] as usize);
                s += &format!(" requests={:?}", &values[lo..hi]);
            }
            s
        })
        .collect();
    (described, file)
}

#[test]
fn a_single_file_trace_is_written_rank_by_rank() {
    let dir = common::scratch_dir("tit-convert");
    let src = write(&dir, "t.txt", TRACE.as_bytes());
    let dst = dir.join("t.parquet");
    let mut converter = Converter::new(vec![src.clone()], false, 3, 1e9, &dst, layout(2)).unwrap();
    let mut groups = Vec::new();
    let written = converter
        .run(|rows| {
            groups.push(rows);
            Ok(())
        })
        .unwrap();
    let metadata = HashMap::from([("tailcast.ranks".to_string(), "3".to_string())]);
    converter.finish(metadata).unwrap();
    // Rows by rank, in file order within a rank; row groups of one rank, at most 2 rows.
    let mut want = read_all(&src, usize::MAX);
    want.sort_by_key(|row| row.split(' ').next().unwrap().parse::<u32>().unwrap());
    let (got, file) = rows_of_file(&dst);
    assert_eq!(got, want);
    assert_eq!(written, 13);
    assert_eq!(groups, [2, 2, 1, 2, 2, 1, 2, 1]); // ranks 0, 1, 2 have 5, 5 and 3 rows
    assert_eq!(file.group_starts(), [0, 2, 4, 5, 7, 9, 10, 12, 13]);
    assert_eq!(file.key_value("tailcast.ranks"), Some("3"));
    assert!(matches!(
        converter.finish(HashMap::new()),
        Err(ConvertError::Invalid(m)) if m == "converter finished"
    ));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn per_rank_files_stream_and_errors_name_file_and_line() {
    let dir = common::scratch_dir("tit-per-rank");
    let files = vec![
        write(&dir, "0.txt", b"0 init\n0 send 1 0 8\n0 finalize\n"),
        write(&dir, "1.txt", b"1 init\n1 recv 0 0 8\n1 finalize\n"),
    ];
    let dst = dir.join("p.parquet");
    let mut converter = Converter::new(files.clone(), true, 2, 1e9, &dst, layout(100)).unwrap();
    let mut groups = Vec::new();
    let written = converter
        .run(|rows| {
            groups.push(rows);
            Ok(())
        })
        .unwrap();
    converter.finish(HashMap::new()).unwrap();
    assert_eq!((written, groups), (6, vec![3, 3]));
    let (got, _) = rows_of_file(&dst);
    assert_eq!(got[4], "1 1 recv t=0 peer=0 tag=0 recv=8");
    // A line of another rank in a per-rank file.
    let wrong = write(&dir, "1.txt", b"1 init\n0 finalize\n");
    let mut converter = Converter::new(
        vec![files[0].clone(), wrong],
        true,
        2,
        1e9,
        &dst,
        layout(100),
    )
    .unwrap();
    match converter.run(|_| Ok(())) {
        Err(ConvertError::Line {
            path,
            line,
            message,
        }) => {
            assert_eq!((path, line), (files[1].clone(), 2));
            assert_eq!(message, "rank 0 does not belong here");
        }
        other => panic!("{other:?}"),
    }
    // The progress callback stops the conversion.
    let mut converter = Converter::new(files.clone(), true, 2, 1e9, &dst, layout(100)).unwrap();
    assert!(matches!(
        converter.run(|_| Err(())),
        Err(ConvertError::Stopped)
    ));
    // Bad arguments.
    let mut bad = layout(100);
    bad.columns.push("iteration".into());
    match Converter::new(files.clone(), true, 2, 1e9, &dst, bad) {
        Err(ConvertError::Invalid(m)) => assert_eq!(m, "no TiT column iteration"),
        other => panic!("{:?}", other.err()),
    }
    assert!(matches!(
        Converter::new(files, true, 2, f64::NAN, &dst, layout(100)),
        Err(ConvertError::Invalid(_))
    ));
    std::fs::remove_dir_all(dir).unwrap();
}

/// Lines of every action the parser maps, for 3 ranks (SimGrid's argument layouts).
const ACTIONS: [&str; 24] = [
    "0 init",
    "1 init 1",
    "0 compute 1e3",
    "0 sleep 0.5",
    "0 send 1 0 8",
    "1 recv 0 0 8",
    "0 isend 2 1 1e6 2",
    "2 irecv 0 1 1e6 2",
    "0 wait 0 2 1",
    "2 waitall",
    "1 test",
    "0 barrier",
    "0 bcast 8 1 3",
    "0 reduce 8 0 1 4",
    "0 allreduce 8 0 5",
    "0 alltoall 8 8 6 6",
    "0 allgather 8 8",
    "0 gather 8 8 1 7 7",
    "0 scatter 8 8 0",
    "0 alltoallv 16 8 8 8 16 8 8 8 1 1",
    "0 gatherv 8 4 4 4 1 2",
    "0 allgatherv 8 4 4 4",
    "0 scatterv 4 4 4 8 0",
    "0 reducescatter 4 4 4 8 1",
];

/// Tokens that sit at the edges of what the parser reads.
const ODD: [&str; 14] = [
    "-1",
    "0",
    "1e400",
    "nan",
    "inf",
    "99999999999999999999",
    "18446744073709551615",
    "2147483648",
    "-9223372036854775808",
    "x",
    "1e18",
    "0.5",
    "",
    "#",
];

/// 20,000 damaged copies of the action lines (tokens replaced by odd ones, dropped,
/// repeated; lines dropped or repeated; bytes changed): each parses or fails naming the line
/// it stopped at; none panics (integer overflow included: test builds check it).
#[test]
fn damaged_lines_are_errors_never_panics() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rng = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let (mut parsed, mut failed) = (0, 0);
    for _ in 0..20_000 {
        let mut lines: Vec<Vec<String>> = (0..1 + rng(12))
            .map(|_| {
                ACTIONS[rng(ACTIONS.len())]
                    .split(' ')
                    .map(String::from)
                    .collect()
            })
            .collect();
        for _ in 0..1 + rng(4) {
            let l = rng(lines.len());
            let line = &mut lines[l];
            if line.is_empty() {
                continue; // (an earlier edit emptied it)
            }
            let t = rng(line.len());
            match rng(6) {
                0 => line[t] = ODD[rng(ODD.len())].to_string(),
                1 => drop(line.remove(t)),
                2 => line.insert(t, line[t].clone()),
                3 => {
                    let copy = line.clone();
                    lines.insert(l, copy);
                }
                4 => {
                    let mut bytes = line[t].clone().into_bytes();
                    if !bytes.is_empty() {
                        let at = rng(bytes.len());
                        let pool = b" 09.e-+x\t";
                        bytes[at] = pool[rng(pool.len())];
                    }
                    line[t] = String::from_utf8(bytes).unwrap();
                }
                _ => line.truncate(t),
            }
        }
        let mut parser = TitParser::new(3, 1e9).unwrap();
        let mut outcome = Ok(());
        for (i, tokens) in lines.iter().enumerate() {
            outcome = parser.line(&tokens.join(" "), i as u64 + 1, None);
            if let Err(e) = &outcome {
                assert!(e.line == i as u64 + 1 && !e.message.is_empty(), "{e:?}");
                break;
            }
        }
        if outcome.is_ok() {
            parsed += 1;
        } else {
            failed += 1;
        }
    }
    assert!(
        parsed > 1000 && failed > 1000,
        "{parsed} parsed, {failed} failed"
    );
}
