//! Counters of the packet engine (`fabric_stats`): packets, packet-hops, credit stalls,
//! and the occupancy of the buffers packets enter, per link class, as percentiles.

/// Occupancy histogram resolution: percent of a buffer.
const BINS: usize = 101;

#[derive(Debug, Clone)]
pub struct Stats {
    pub packets: u64,
    pub packet_hops: u64,
    /// Events and arbitrations the engine ran.
    pub events: u64,
    /// Packets that found their output free but no credit for the next buffer, and the
    /// time they waited so.
    pub credit_stalls: u64,
    pub credit_stall_ns: f64,
    /// Per link class: how full (percent, after it) the buffer a packet entered was.
    occupancy: Vec<[u64; BINS]>,
}

impl Stats {
    pub fn new(classes: usize) -> Self {
        Self {
            packets: 0,
            packet_hops: 0,
            events: 0,
            credit_stalls: 0,
            credit_stall_ns: 0.0,
            occupancy: vec![[0; BINS]; classes],
        }
    }

    /// A packet entered a buffer of a link of class `class`, which now holds `fraction`
    /// of its bytes.
    pub fn entered(&mut self, class: u8, fraction: f64) {
        let bin = (fraction * 100.0).round().clamp(0.0, 100.0) as usize;
        self.occupancy[class as usize][bin] += 1;
    }

    pub fn report(&self, class_names: &[&str], out: &mut Vec<(String, f64)>) {
        out.push(("packets".into(), self.packets as f64));
        out.push(("packet_hops".into(), self.packet_hops as f64));
        out.push(("packet_events".into(), self.events as f64));
        out.push(("credit_stalls".into(), self.credit_stalls as f64));
        out.push(("credit_stall_ns".into(), self.credit_stall_ns));
        for (c, name) in class_names.iter().enumerate() {
            let Some(h) = self.occupancy.get(c) else {
                continue;
            };
            let n: u64 = h.iter().sum();
            if n == 0 {
                continue;
            }
            for (label, q) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
                let rank = ((q * n as f64).ceil() as u64).max(1);
                let mut seen = 0;
                let bin = h
                    .iter()
                    .position(|&k| {
                        seen += k;
                        seen >= rank
                    })
                    .unwrap_or(BINS - 1);
                out.push((format!("buffer_occupancy_{name}_{label}_pct"), bin as f64));
            }
        }
    }
}
