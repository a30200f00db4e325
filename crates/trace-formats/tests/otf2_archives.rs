//! The OTF2 reader on real archives: the fuzzing's seed archives (tests/data/otf2-seeds,
//! written by Score-P's own writer through the `otf2` wheel, bench/trace_fuzz.py
//! `write_otf2_seed`), the damaged archives that broke the C library (tests/data/fuzz), and
//! damaged copies of the seeds.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use trace_formats::otf2::{read_archive, Archive};

/// OTF2 record ids (otf2_events_int.h).
const ENTER: u8 = 12;
const LEAVE: u8 = 13;
const MPI_SEND: u8 = 14;
const MPI_ISEND: u8 = 15;
const MPI_ISEND_COMPLETE: u8 = 16;
const MPI_IRECV_REQUEST: u8 = 17;
const MPI_RECV: u8 = 18;
const MPI_IRECV: u8 = 19;
const MPI_COLLECTIVE_END: u8 = 23;

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(path)
}

/// The seeds: (directory name, ranks, rounds).
const SEEDS: [(&str, usize, usize); 3] = [("2x1", 2, 1), ("2x3", 2, 3), ("4x2", 4, 2)];

fn seed(name: &str) -> Archive {
    read_archive(&data(&format!("otf2-seeds/{name}/traces.otf2"))).unwrap()
}

/// The regions each rank of a seed enters, in order (write_otf2_seed's program).
fn program(rank: usize, rounds: usize) -> Vec<&'static str> {
    let mut calls = vec!["MPI_Init", "MPI_Comm_rank"];
    for _ in 0..rounds {
        let p2p = if rank.is_multiple_of(2) {
            "MPI_Send"
        } else {
            "MPI_Recv"
        };
        calls.extend(["MPI_Isend", "MPI_Irecv", "MPI_Waitall", p2p]);
        calls.extend(["MPI_Allreduce", "MPI_Bcast", "MPI_Barrier"]);
    }
    calls.push("MPI_Finalize");
    calls
}

#[test]
fn seeds_hold_the_program_their_writer_ran() {
    for (name, ranks, rounds) in SEEDS {
        let archive = seed(name);
        let defs = &archive.defs;
        assert_eq!(defs.clock, Some((1_000_000_000, 0)), "{name}");
        let ids: Vec<u64> = defs.locations.iter().map(|l| l.id).collect();
        assert_eq!(ids, (0..ranks as u64).collect::<Vec<_>>(), "{name}");
        let world = &defs.comms[..];
        assert_eq!(world.len(), 1, "{name}");
        assert_eq!(defs.strings[&world[0].name], "MPI_COMM_WORLD", "{name}");
        // Merged in time order.
        assert!(archive
            .events
            .windows(2)
            .all(|w| w[0].1.time <= w[1].1.time));
        for rank in 0..ranks {
            let events: Vec<_> = archive
                .events
                .iter()
                .filter(|(loc, _)| *loc == rank)
                .map(|(_, e)| *e)
                .collect();
            let entered: Vec<&str> = events
                .iter()
                .filter(|e| e.kind == ENTER)
                .map(|e| defs.strings[&defs.regions[&(e.fields[0] as u32)]].as_str())
                .collect();
            assert_eq!(entered, program(rank, rounds), "{name} rank {rank}");
            // Each rank's clock starts at 1000 * rank; a call's Leave follows its Enter.
            assert_eq!(events[0].time, 1000 * rank as u64, "{name} rank {rank}");
            let mut kinds: HashMap<u8, usize> = HashMap::new();
            for e in &events {
                *kinds.entry(e.kind).or_default() += 1;
            }
            let (sends, recvs) = if rank.is_multiple_of(2) {
                (rounds, 0)
            } else {
                (0, rounds)
            };
            let want = [
                (ENTER, 3 + 7 * rounds),
                (LEAVE, 3 + 7 * rounds),
                (MPI_ISEND, rounds),
                (MPI_IRECV_REQUEST, rounds),
                (MPI_ISEND_COMPLETE, rounds),
                (MPI_IRECV, rounds),
                (MPI_SEND, sends),
                (MPI_RECV, recvs),
                (MPI_COLLECTIVE_END, 3 * rounds),
            ];
            for (kind, count) in want {
                assert_eq!(
                    kinds.get(&kind).copied().unwrap_or(0),
                    count,
                    "{name} {kind}"
                );
            }
            // Isend: peer, communicator, tag, length, request (round k: request 2k).
            let isends: Vec<[u64; 5]> = events
                .iter()
                .filter(|e| e.kind == MPI_ISEND)
                .map(|e| e.fields)
                .collect();
            for (k, f) in isends.iter().enumerate() {
                let peer = ((rank + 1) % ranks) as u64;
                assert_eq!(
                    *f,
                    [peer, world[0].id as u64, 7, 1024, 2 * k as u64],
                    "{name}"
                );
            }
        }
    }
}

/// Damaged archives the fuzz bench found (the `otf2` wheel's C library aborted or wrote
/// past a buffer on them): an error naming the file, the byte and what was expected.
#[test]
fn archives_that_broke_the_c_library_are_errors_naming_file_and_byte() {
    let cases = [
        (225, "traces/1.def", 19, "end of chunk"),
        (
            226,
            "traces/0.def",
            20,
            "local definition record: needs 128 bytes",
        ),
        (10718, "traces/0.evt", 30, "timestamp"),
        (
            3366,
            "traces.otf2",
            72,
            "property value: string without its terminating NUL",
        ),
    ];
    for (input, file, offset, what) in cases {
        let anchor = data(&format!("fuzz/otf2-seed19-input{input}/traces.otf2"));
        let err = read_archive(&anchor).err().unwrap();
        assert!(err.file.ends_with(file), "{input}: {err}");
        assert_eq!(err.offset, offset, "{input}: {err}");
        assert!(err.what.starts_with(what), "{input}: {err}");
    }
}

/// xorshift64: the same damage on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes flipped or set to extreme integers, or the file cut short (as bench/trace_fuzz.py
/// damages files).
fn damaged(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..1 + rng.below(8) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        if rng.next().is_multiple_of(2) {
            out[at] = rng.next() as u8;
        } else {
            let word: [u8; 4] = [[0xff; 4], [0, 0, 0, 0x80], [0; 4]][rng.below(3)];
            let end = (at + 4).min(out.len());
            out[at..end].copy_from_slice(&word[..end - at]);
        }
    }
    if rng.below(10) < 3 {
        out.truncate(rng.below(out.len() + 1));
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dst = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dst);
        } else {
            std::fs::copy(&path, &dst).unwrap();
        }
    }
}

/// 3,000 damaged copies of the seeds (one file damaged each): every one reads or fails with
/// an error naming a file of the archive and a byte inside it; none panics.
#[test]
fn damaged_seed_archives_are_errors_never_panics() {
    let scratch = common::scratch_dir("otf2-damage");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut read, mut failed) = (0, 0);
    for (name, _, _) in SEEDS {
        let root = scratch.join(name);
        copy_dir(&data(&format!("otf2-seeds/{name}")), &root);
        let mut files = vec![root.join("traces.otf2"), root.join("traces.def")];
        let mut local: Vec<PathBuf> = std::fs::read_dir(root.join("traces"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        local.sort();
        files.extend(local);
        for _ in 0..1000 {
            let file = &files[rng.below(files.len())];
            let good = std::fs::read(file).unwrap();
            let bad = damaged(&good, &mut rng);
            std::fs::write(file, &bad).unwrap();
            match read_archive(&root.join("traces.otf2")) {
                Ok(_) => read += 1,
                Err(err) => {
                    failed += 1;
                    // A damaged location id names a file the archive lacks.
                    let named = Path::new(&err.file);
                    assert!(named.starts_with(&root), "{err}: not a file of {name}");
                    match std::fs::metadata(named) {
                        Ok(meta) => assert!(err.offset as u64 <= meta.len(), "{err}: past the end"),
                        Err(_) => assert!(err.what.starts_with("cannot read"), "{err}"),
                    }
                }
            }
            std::fs::write(file, &good).unwrap();
        }
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    assert_eq!(read + failed, 3000);
    assert!(failed > 1000, "{failed} of 3000 damaged archives failed");
}
