//! An N × N Banyan network of 2×2 switches (seed 003 §1, Fig. 1): log2 N stages of N/2
//! switches and exactly one path between every input and output. Wired as an Omega
//! network (Lawrie 1975): a perfect shuffle in front of every stage, destination-tag
//! routing (stage k leaves on bit n−1−k of the destination).
//!
//! `Reservations` holds the optical switches' reservations (seed 003 §4): a *setup* signal
//! asks each switch on its path for a state (pass-through when it leaves on the port it
//! came in on, crossover otherwise); the switch grants it unless another source holds the
//! same input, or holds the other input in the other state. A source enters a stage's
//! switches always on the same input (bit n−1−k of its number), so a switch input belongs
//! to one source at a time. Setups of one source do not exclude each other: a VOQ
//! *setupBurst* "explores multiple optical paths in parallel" (§5) of which at most one
//! will carry light, the others being torn down unused.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub switch: u32,
    pub input: u8,
    pub output: u8,
    /// Row the hop leaves on (stage output row).
    pub row: u32,
}

#[derive(Debug, Clone)]
pub struct Banyan {
    ports: u32,
    log2: u32,
}

impl Banyan {
    pub fn new(ports: u32) -> Result<Self, String> {
        if ports < 2 || !ports.is_power_of_two() {
            return Err(format!(
                "a Banyan network needs a power-of-two port count >= 2, got {ports}"
            ));
        }
        Ok(Self {
            ports,
            log2: ports.trailing_zeros(),
        })
    }

    pub fn ports(&self) -> u32 {
        self.ports
    }

    pub fn stages(&self) -> u32 {
        self.log2
    }

    pub fn switches(&self) -> u32 {
        self.log2 * self.ports / 2
    }

    fn shuffle(&self, row: u32) -> u32 {
        ((row << 1) | (row >> (self.log2 - 1))) & (self.ports - 1)
    }

    /// The switch, ports and output row at stage `k` of the path `src` → `dst`.
    pub fn hop(&self, src: u32, dst: u32, k: u32) -> Hop {
        let mut row = self.shuffle(src);
        for j in 0..=k {
            let out = (dst >> (self.log2 - 1 - j)) & 1;
            let leave = (row & !1) | out;
            if j == k {
                return Hop {
                    switch: k * self.ports / 2 + row / 2,
                    input: (row & 1) as u8,
                    output: out as u8,
                    row: leave,
                };
            }
            row = self.shuffle(leave);
        }
        unreachable!("k < stages")
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Holder {
    source: u32,
    /// Setups holding the input in the pass-through and in the crossover state.
    pass: u32,
    cross: u32,
}

impl Holder {
    fn held(&self) -> bool {
        self.pass + self.cross > 0
    }
}

/// Who holds each switch input, and in which states.
#[derive(Debug, Clone)]
pub struct Reservations {
    held: Vec<[Holder; 2]>,
}

impl Reservations {
    pub fn new(switches: u32) -> Self {
        Self {
            held: vec![[Holder::default(); 2]; switches as usize],
        }
    }

    /// Grants `hop` to a setup from `source` if the switch can take it.
    pub fn reserve(&mut self, hop: &Hop, source: u32) -> bool {
        let pass = hop.input == hop.output;
        let [a, b] = self.held[hop.switch as usize];
        let (mine, other) = if hop.input == 0 { (a, b) } else { (b, a) };
        if mine.held() && mine.source != source {
            return false;
        }
        if other.held()
            && other.source != source
            && (if pass { other.cross } else { other.pass }) > 0
        {
            return false;
        }
        let h = &mut self.held[hop.switch as usize][hop.input as usize];
        h.source = source;
        if pass {
            h.pass += 1;
        } else {
            h.cross += 1;
        }
        true
    }

    /// A teardown passes a switch its setup was granted.
    pub fn release(&mut self, hop: &Hop) {
        let h = &mut self.held[hop.switch as usize][hop.input as usize];
        let count = if hop.input == hop.output {
            &mut h.pass
        } else {
            &mut h.cross
        };
        debug_assert!(*count > 0, "release of a switch input nobody holds");
        *count -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destination_tag_routing_reaches_every_output_through_log2_n_stages() {
        for n in [2u32, 4, 8, 32] {
            let b = Banyan::new(n).unwrap();
            assert_eq!(b.switches(), b.stages() * n / 2);
            for s in 0..n {
                for d in 0..n {
                    let last = b.hop(s, d, b.stages() - 1);
                    assert_eq!(last.row, d, "N = {n}: {s} → {d}");
                }
            }
        }
        assert!(Banyan::new(12).is_err());
    }

    #[test]
    fn one_path_per_pair_and_xor_permutations_pass_without_conflict() {
        let b = Banyan::new(16).unwrap();
        for c in 1..16 {
            let mut r = Reservations::new(b.switches());
            for s in 0..16 {
                for k in 0..b.stages() {
                    assert!(
                        r.reserve(&b.hop(s, s ^ c, k), s),
                        "xor {c}: source {s} stage {k}"
                    );
                }
            }
        }
        // Two sources into one output always collide on the way.
        let mut r = Reservations::new(b.switches());
        let first = (0..4).all(|k| r.reserve(&b.hop(3, 9, k), 3));
        let second = (0..4).all(|k| r.reserve(&b.hop(12, 9, k), 12));
        assert!(first && !second);
    }

    #[test]
    fn a_sources_setups_share_its_inputs_but_exclude_other_sources() {
        let b = Banyan::new(8).unwrap();
        let mut r = Reservations::new(b.switches());
        // A source enters stage k on input bit n−1−k of its number, whatever the destination.
        for s in 0..8 {
            for d in 0..8 {
                for k in 0..3 {
                    assert_eq!(u32::from(b.hop(s, d, k).input), (s >> (2 - k)) & 1);
                }
            }
        }
        // 0 → 0, 0 → 1 and 0 → 4 are alternatives of one source: all granted.
        for d in [0, 1, 4] {
            assert!((0..3).all(|k| r.reserve(&b.hop(0, d, k), 0)), "0 → {d}");
        }
        // 4 → 2 enters stage 0's switch on the other input, in a state source 0 holds
        // both of (0 → 0 passes, 0 → 4 crosses): refused until 0 → 4 is torn down.
        assert_eq!(b.hop(4, 2, 0).switch, b.hop(0, 0, 0).switch);
        assert!(!r.reserve(&b.hop(4, 2, 0), 4));
        for k in 0..3 {
            r.release(&b.hop(0, 4, k));
        }
        let pass_ok = b.hop(4, 2, 0).input == b.hop(4, 2, 0).output;
        assert_eq!(
            r.reserve(&b.hop(4, 2, 0), 4),
            pass_ok == (b.hop(0, 0, 0).input == b.hop(0, 0, 0).output)
        );
        // Another source on an input source 0 holds is refused.
        let h = b.hop(0, 0, 1);
        let s = (1..8u32)
            .find(|&s| {
                let x = b.hop(s, 0, 1);
                x.switch == h.switch && x.input == h.input
            })
            .expect("two sources reach each stage-1 input");
        assert!(!r.reserve(&b.hop(s, 0, 1), s));
    }
}
