//! Times `queue_scan::scan` on a file: `cargo run --release --example scan_file -- FILE [N]`.

use std::time::Instant;

/// CPU time of this thread in seconds (Linux schedstat), less disturbed than wall time on a
/// shared machine.
fn cpu_s() -> f64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns: f64 = text
        .split_whitespace()
        .next()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    ns / 1e9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: scan_file FILE [REPEATS]");
    let repeats: usize = args
        .next()
        .map_or(3, |n| n.parse().expect("REPEATS is a number"));
    let data = std::fs::read(&path).expect("readable file");
    for _ in 0..repeats {
        let (t0, c0) = (Instant::now(), cpu_s());
        match queue_scan::scan(&data) {
            Ok(scan) => {
                let (s, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
                println!(
                    "{} jobs, {} problems, wall {:.3} s, cpu {:.3} s, {:.2} GB/s of cpu",
                    scan.jobs.len(),
                    scan.problems.len(),
                    s,
                    cpu,
                    data.len() as f64 / cpu / 1e9
                );
            }
            Err(err) => println!("error: {err}"),
        }
    }
}
