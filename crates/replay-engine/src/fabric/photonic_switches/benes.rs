//! The Beneš network of 2×2 cells (Beneš 1962; seed 000 §I, Fig. 1b): N = 2^n ports,
//! 2n − 1 stages of N/2 cells, N/2 paths between every input and output, rearrangeably
//! non-blocking. Laid out recursively as drawn in seed 000's Fig. 1(b): a column of input
//! cells, an upper and a lower Beneš(N/2) stacked in the middle, a column of output cells.
//! Input cell i sends its port 0 to the upper half's input i and its port 1 to the lower
//! half's; output cell j takes the upper half's output j on port 0 and the lower's on 1.
//!
//! Rows: stage s has rows 0..N (cell s·N/2 + row/2, port row % 2). A cell is in the *bar*
//! state when light leaves on the port number it came in on, *cross* otherwise. Waveguide
//! crossings are counted on the planar drawing with straight wires between columns: two
//! wires of one inter-stage permutation cross when their rows swap order.
//!
//! `looping` sets the cells for a whole permutation with the looping algorithm (Opferman &
//! Tsao-Wu 1971, seed 000 ref. [9]).

/// One cell a path crosses, and the state it needs there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub cell: u32,
    pub bar: bool,
}

/// A path through the fabric with what routing ranks it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub hops: Vec<Hop>,
    /// Waveguide crossings on the wires between its stages.
    pub crossings: u32,
}

impl Path {
    pub fn bars(&self) -> u32 {
        self.hops.iter().filter(|h| h.bar).count() as u32
    }
}

#[derive(Debug, Clone)]
pub struct Benes {
    ports: u32,
    log2: u32,
    /// wires[b][row]: the input row of stage b + 1 fed by output row `row` of stage b.
    wires: Vec<Vec<u32>>,
    /// crossings[b][row]: crossings on the wire leaving output row `row` of stage b.
    crossings: Vec<Vec<u32>>,
    /// reach[s][row]: bit mask of the outputs reachable from input row `row` of stage s.
    reach: Vec<Vec<u64>>,
}

impl Benes {
    /// Largest radix (reachability masks are u64).
    pub const MAX_PORTS: u32 = 64;

    pub fn new(ports: u32) -> Result<Self, String> {
        if !(2..=Self::MAX_PORTS).contains(&ports) || !ports.is_power_of_two() {
            return Err(format!(
                "a Beneš network needs a power-of-two port count in [2, {}], got {ports}",
                Self::MAX_PORTS
            ));
        }
        let log2 = ports.trailing_zeros();
        let stages = 2 * log2 - 1;
        let mut wires = vec![(0..ports).collect::<Vec<u32>>(); stages as usize - 1];
        wire(&mut wires, ports, 0, 0, stages as usize - 1);
        let crossings = wires.iter().map(|w| wire_crossings(w)).collect();
        let mut reach = vec![vec![0u64; ports as usize]; stages as usize];
        for (row, mask) in reach[stages as usize - 1].iter_mut().enumerate() {
            *mask = 0b11 << (row & !1);
        }
        for s in (0..stages as usize - 1).rev() {
            let (here, next) = reach.split_at_mut(s + 1);
            for (row, mask) in here[s].iter_mut().enumerate() {
                let base = row & !1;
                *mask = next[0][wires[s][base] as usize] | next[0][wires[s][base + 1] as usize];
            }
        }
        Ok(Self {
            ports,
            log2,
            wires,
            crossings,
            reach,
        })
    }

    pub fn ports(&self) -> u32 {
        self.ports
    }

    pub fn stages(&self) -> u32 {
        2 * self.log2 - 1
    }

    pub fn cells(&self) -> u32 {
        self.stages() * self.ports / 2
    }

    fn cell(&self, stage: usize, row: u32) -> u32 {
        stage as u32 * self.ports / 2 + row / 2
    }

    /// Every path from input `src` to output `dst` (N/2 of them), in a fixed order.
    pub fn paths(&self, src: u32, dst: u32) -> Vec<Path> {
        let mut out = Vec::with_capacity(self.ports as usize / 2);
        let mut hops = Vec::with_capacity(self.stages() as usize);
        self.walk(0, src, dst, 0, &mut hops, &mut out);
        out
    }

    fn walk(
        &self,
        s: usize,
        row: u32,
        dst: u32,
        crossings: u32,
        hops: &mut Vec<Hop>,
        out: &mut Vec<Path>,
    ) {
        let last = self.stages() as usize - 1;
        for port in 0..2u32 {
            let leave = (row & !1) | port;
            let reachable = if s == last {
                leave == dst
            } else {
                self.reach[s + 1][self.wires[s][leave as usize] as usize] >> dst & 1 == 1
            };
            if !reachable {
                continue;
            }
            hops.push(Hop {
                cell: self.cell(s, row),
                bar: row & 1 == port,
            });
            if s == last {
                out.push(Path {
                    hops: hops.clone(),
                    crossings,
                });
            } else {
                let c = crossings + self.crossings[s][leave as usize];
                self.walk(s + 1, self.wires[s][leave as usize], dst, c, hops, out);
            }
            hops.pop();
        }
    }

    /// Where light entering `input` leaves, with every cell set as `bar` says.
    pub fn output(&self, bar: &[bool], input: u32) -> u32 {
        let mut row = input;
        for s in 0..self.stages() as usize {
            let leave = if bar[self.cell(s, row) as usize] {
                row
            } else {
                row ^ 1
            };
            row = match self.wires.get(s) {
                Some(w) => w[leave as usize],
                None => leave,
            };
        }
        row
    }

    /// Cell states (true = bar) routing input i to output `perm[i]` for every i at once,
    /// by the looping algorithm.
    pub fn looping(&self, perm: &[u32]) -> Vec<bool> {
        assert_eq!(
            perm.len(),
            self.ports as usize,
            "a permutation of every port"
        );
        let mut bar = vec![true; self.cells() as usize];
        let last = self.stages() as usize - 1;
        self.loop_route(perm, 0, last, 0, &mut bar);
        bar
    }

    /// Routes `perm` (local rows) through the sub-network spanning stages first..=last on
    /// rows offset..offset + perm.len().
    fn loop_route(&self, perm: &[u32], first: usize, last: usize, offset: u32, bar: &mut [bool]) {
        let m = perm.len();
        if m == 2 {
            bar[self.cell(first, offset) as usize] = perm[0] == 0;
            return;
        }
        let mut inverse = vec![0u32; m];
        for (i, &o) in perm.iter().enumerate() {
            inverse[o as usize] = i as u32;
        }
        // upper[i]: input i crosses the upper half. Each input cell sends one input up and
        // one down; each output cell takes one from each half. Closing the loops from an
        // unassigned input cell satisfies both.
        let mut upper: Vec<Option<bool>> = vec![None; m];
        for start in (0..m).step_by(2) {
            if upper[start].is_some() {
                continue;
            }
            let mut x = start;
            while upper[x].is_none() {
                upper[x] = Some(true);
                upper[x ^ 1] = Some(false);
                // x^1 goes down, so the output sharing its output cell must come from above.
                let partner = perm[x ^ 1] as usize ^ 1;
                x = inverse[partner] as usize;
            }
        }
        let half = m / 2;
        let mut up = vec![0u32; half];
        let mut down = vec![0u32; half];
        for x in 0..m {
            let (i, o) = (x / 2, perm[x] / 2);
            if upper[x] == Some(true) {
                up[i] = o;
            } else {
                down[i] = o;
            }
        }
        for c in 0..half as u32 {
            let row = offset + 2 * c;
            bar[self.cell(first, row) as usize] = upper[2 * c as usize] == Some(true);
            let from = inverse[2 * c as usize] as usize;
            bar[self.cell(last, row) as usize] = upper[from] == Some(true);
        }
        self.loop_route(&up, first + 1, last - 1, offset, bar);
        self.loop_route(&down, first + 1, last - 1, offset + half as u32, bar);
    }
}

/// Fills the inter-stage wiring of the sub-network of `size` rows at `offset` spanning
/// stages first..=last (boundaries first..last).
fn wire(wires: &mut [Vec<u32>], size: u32, offset: u32, first: usize, last: usize) {
    if size == 2 {
        return;
    }
    let half = size / 2;
    for i in 0..half {
        for b in 0..2 {
            // Input cell i's port b → half b's input i; half b's output i → output cell i's port b.
            wires[first][(offset + 2 * i + b) as usize] = offset + b * half + i;
            wires[last - 1][(offset + b * half + i) as usize] = offset + 2 * i + b;
        }
    }
    wire(wires, half, offset, first + 1, last - 1);
    wire(wires, half, offset + half, first + 1, last - 1);
}

/// Crossings on each wire of one inter-stage permutation (rows swapping order cross).
fn wire_crossings(w: &[u32]) -> Vec<u32> {
    (0..w.len())
        .map(|a| {
            (0..w.len())
                .filter(|&c| (c as i64 - a as i64) * (i64::from(w[c]) - i64::from(w[a])) < 0)
                .count() as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_cells_and_paths_per_pair_for_8_to_64_ports() {
        for n in [8u32, 16, 32, 64] {
            let b = Benes::new(n).unwrap();
            let log2 = n.trailing_zeros();
            assert_eq!(b.stages(), 2 * log2 - 1, "N = {n}");
            assert_eq!(b.cells(), (2 * log2 - 1) * n / 2, "N = {n}");
            for src in 0..n {
                for dst in 0..n {
                    let paths = b.paths(src, dst);
                    assert_eq!(paths.len() as u32, n / 2, "N = {n}, {src} → {dst}");
                    for p in &paths {
                        assert_eq!(p.hops.len() as u32, b.stages());
                        let mut bar = vec![false; b.cells() as usize];
                        for h in &p.hops {
                            bar[h.cell as usize] = h.bar;
                        }
                        assert_eq!(b.output(&bar, src), dst);
                    }
                    let mut distinct: Vec<&Vec<Hop>> = paths.iter().map(|p| &p.hops).collect();
                    distinct.sort_by_key(|h| h.iter().map(|x| (x.cell, x.bar)).collect::<Vec<_>>());
                    distinct.dedup();
                    assert_eq!(distinct.len(), paths.len());
                }
            }
        }
    }

    /// Next permutation in lexicographic order; false after the last.
    fn next_perm(p: &mut [u32]) -> bool {
        let Some(i) = (1..p.len()).rev().find(|&i| p[i - 1] < p[i]) else {
            return false;
        };
        let j = (i..p.len()).rev().find(|&j| p[j] > p[i - 1]).unwrap();
        p.swap(i - 1, j);
        p[i..].reverse();
        true
    }

    #[test]
    fn every_permutation_of_8_routes_conflict_free_by_looping() {
        let b = Benes::new(8).unwrap();
        let mut perm: Vec<u32> = (0..8).collect();
        let mut count = 0;
        loop {
            // One state per cell cannot conflict; every input must reach its own output.
            let bar = b.looping(&perm);
            for (i, &o) in perm.iter().enumerate() {
                assert_eq!(b.output(&bar, i as u32), o, "{perm:?}");
            }
            count += 1;
            if !next_perm(&mut perm) {
                break;
            }
        }
        assert_eq!(count, 40320);
    }

    #[test]
    fn looping_routes_random_permutations_of_64() {
        let b = Benes::new(64).unwrap();
        let mut rng = crate::prng::SplitMix64::new(7);
        for _ in 0..200 {
            let mut perm: Vec<u32> = (0..64).collect();
            rng.shuffle(&mut perm);
            let bar = b.looping(&perm);
            for (i, &o) in perm.iter().enumerate() {
                assert_eq!(b.output(&bar, i as u32), o);
            }
        }
    }

    #[test]
    fn the_4_port_layout_has_the_crossings_of_its_drawing() {
        // Boundaries of a 4-port Beneš: rows 0,1,2,3 → 0,2,1,3 and back; only the wires of
        // rows 1 and 2 cross (one crossing each) at each boundary.
        let b = Benes::new(4).unwrap();
        assert_eq!(b.wires, vec![vec![0, 2, 1, 3], vec![0, 2, 1, 3]]);
        assert_eq!(b.crossings, vec![vec![0, 1, 1, 0], vec![0, 1, 1, 0]]);
        // 0 → 0: straight through the upper half (0 crossings) or via the lower (2).
        let mut c: Vec<u32> = b.paths(0, 0).iter().map(|p| p.crossings).collect();
        c.sort_unstable();
        assert_eq!(c, vec![0, 2]);
    }

    #[test]
    fn bad_radices_are_refused() {
        assert!(Benes::new(12).is_err());
        assert!(Benes::new(128).is_err());
        assert!(Benes::new(1).is_err());
    }
}
