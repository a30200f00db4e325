//! The MZI cells of a photonic switching fabric at run time: which paths hold each cell,
//! the state it is tuned to, its tuning power, and the energy spent tuning (seed 000
//! §III-A, Table II(b)); plus routing among the free paths of a pair (§IV-B).
//!
//! A path is free when none of its cells is in use in the other state (seed 000 §III-A).
//! With at most one circuit per input and per output port this also keeps two circuits
//! off one waveguide: two paths sharing a wire share the cell before it in the same state
//! and the same input, and so on back to one input port.
//!
//! Tuning (§III-A): a cell in use is thermo-optically tuned to *cross* and additionally
//! electro-optically to *bar*; an idle cell draws nothing. Each cell's powers are drawn
//! once per fabric from Table II(b)'s distributions (mean, standard deviation, truncated
//! to the measured range), so one seed is one chip.

use super::psf_paths::PathTable;
use crate::prng::SplitMix64;

/// A tuning power distribution of Table II(b), mW.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSpread {
    pub mean_mw: f64,
    pub sd_mw: f64,
    pub min_mw: f64,
    pub max_mw: f64,
}

impl PowerSpread {
    fn sample(&self, rng: &mut SplitMix64) -> f64 {
        if self.sd_mw == 0.0 {
            return self.mean_mw.clamp(self.min_mw, self.max_mw);
        }
        loop {
            let x = self.mean_mw + self.sd_mw * standard_normal(rng);
            if (self.min_mw..=self.max_mw).contains(&x) {
                return x;
            }
        }
    }
}

/// Box–Muller on two uniforms in (0, 1].
fn standard_normal(rng: &mut SplitMix64) -> f64 {
    let u = |r: &mut SplitMix64| ((r.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let (a, b) = (u(rng), u(rng));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

/// How a path is picked among the free ones of a pair (seed 000 §IV-B).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// `rnd`: uniformly at random.
    Random,
    /// `mb`: fewest cells in the bar state (ties at random).
    MinBar,
    /// `mx`: fewest waveguide crossings (ties at random).
    MinCrossings,
}

impl Routing {
    pub const NAMES: &'static [&'static str] = &["rnd", "mb", "mx"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "rnd" => Some(Self::Random),
            "mb" => Some(Self::MinBar),
            "mx" => Some(Self::MinCrossings),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cells {
    /// Paths holding each cell (0, 1 or 2).
    users: Vec<u8>,
    bar: Vec<bool>,
    thermal_mw: Vec<f64>,
    electrical_mw: Vec<f64>,
    /// Tuning power drawn now, mW.
    power_mw: f64,
    /// Tuning energy up to `since`, pJ (mW × ns).
    energy_pj: f64,
    since: f64,
    /// Tuning power with every cell in use and in bar (Table I's peak), mW.
    peak_mw: f64,
}

impl Cells {
    pub fn new(
        count: u32,
        thermal: &PowerSpread,
        electrical: &PowerSpread,
        rng: &mut SplitMix64,
    ) -> Self {
        let n = count as usize;
        let thermal_mw: Vec<f64> = (0..n).map(|_| thermal.sample(rng)).collect();
        let electrical_mw: Vec<f64> = (0..n).map(|_| electrical.sample(rng)).collect();
        let peak_mw = thermal_mw.iter().sum::<f64>() + electrical_mw.iter().sum::<f64>();
        Self {
            users: vec![0; n],
            bar: vec![false; n],
            thermal_mw,
            electrical_mw,
            power_mw: 0.0,
            energy_pj: 0.0,
            since: 0.0,
            peak_mw,
        }
    }

    pub fn is_free(&self, table: &PathTable, path: u32) -> bool {
        table
            .hops(path)
            .all(|(c, bar)| self.users[c as usize] == 0 || self.bar[c as usize] == bar)
    }

    /// Picks a free path from `src` to `dst`; None when every one is blocked.
    pub fn choose(
        &self,
        table: &PathTable,
        src: u32,
        dst: u32,
        routing: Routing,
        rng: &mut SplitMix64,
    ) -> Option<u32> {
        let mut best: Option<u32> = None;
        let mut best_key = u32::MAX;
        let mut ties = 0u64;
        for p in table.pair(src, dst) {
            if !self.is_free(table, p) {
                continue;
            }
            let info = table.info(p);
            let key = match routing {
                Routing::Random => 0,
                Routing::MinBar => u32::from(info.bars),
                Routing::MinCrossings => u32::from(info.crossings),
            };
            // Reservoir sampling keeps a uniform pick among the best seen so far.
            if key < best_key {
                (best, best_key, ties) = (Some(p), key, 1);
            } else if key == best_key {
                ties += 1;
                if rng.below(ties) == 0 {
                    best = Some(p);
                }
            }
        }
        best
    }

    /// Holds `path` from `now` (tunes its idle cells).
    pub fn take(&mut self, table: &PathTable, path: u32, now: f64) {
        self.settle(now);
        for (c, bar) in table.hops(path) {
            let c = c as usize;
            if self.users[c] == 0 {
                self.bar[c] = bar;
                self.power_mw += self.cell_power(c);
            }
            debug_assert!(self.bar[c] == bar && self.users[c] < 2);
            self.users[c] += 1;
        }
    }

    /// Lets `path` go at `now` (cells no path holds any more stop drawing power).
    pub fn release(&mut self, table: &PathTable, path: u32, now: f64) {
        self.settle(now);
        for (c, _) in table.hops(path) {
            let c = c as usize;
            self.users[c] -= 1;
            if self.users[c] == 0 {
                self.power_mw -= self.cell_power(c);
            }
        }
        if self.users.iter().all(|&u| u == 0) {
            self.power_mw = 0.0; // no drift from float sums
        }
    }

    fn cell_power(&self, c: usize) -> f64 {
        self.thermal_mw[c]
            + if self.bar[c] {
                self.electrical_mw[c]
            } else {
                0.0
            }
    }

    fn settle(&mut self, now: f64) {
        if now > self.since {
            self.energy_pj += self.power_mw * (now - self.since);
            self.since = now;
        }
    }

    /// Tuning energy spent up to `now`, pJ.
    pub fn energy_pj(&self, now: f64) -> f64 {
        self.energy_pj + self.power_mw * (now - self.since).max(0.0)
    }

    /// Tuning power with every cell in use and in the bar state, mW.
    pub fn peak_mw(&self) -> f64 {
        self.peak_mw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::photonic_switches::psf_paths::{Layout, Losses};

    const LOSSES: Losses = Losses {
        bar_db: 1.4,
        cross_db: 0.4,
        crossing_db: 0.05,
        propagation_db_per_cm: 1.18,
        cell_length_um: 0.0,
    };
    const FIXED: PowerSpread = PowerSpread {
        mean_mw: 10.0,
        sd_mw: 0.0,
        min_mw: 0.0,
        max_mw: 26.0,
    };

    #[test]
    fn table_ii_spreads_sample_within_range_around_their_mean() {
        let thermal = PowerSpread {
            mean_mw: 15.725,
            sd_mw: 6.608,
            min_mw: 0.0,
            max_mw: 26.0,
        };
        let mut rng = SplitMix64::new(1);
        let xs: Vec<f64> = (0..20000).map(|_| thermal.sample(&mut rng)).collect();
        assert!(xs.iter().all(|x| (0.0..=26.0).contains(x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        // Truncation at [0, 26] around 15.725 ± 6.608 pulls the mean down slightly.
        assert!((mean - 15.3).abs() < 0.3, "{mean}");
    }

    #[test]
    fn a_path_blocks_paths_needing_its_cells_in_the_other_state_and_energy_integrates() {
        let t = PathTable::new(Layout::Benes, 4, &LOSSES).unwrap();
        let mut rng = SplitMix64::new(3);
        let mut cells = Cells::new(
            t.cells(),
            &FIXED,
            &PowerSpread {
                mean_mw: 5.0,
                ..FIXED
            },
            &mut rng,
        );
        // mb picks the 0 → 0 path with one bar cell (cross, bar, cross).
        let p = cells.choose(&t, 0, 0, Routing::MinBar, &mut rng).unwrap();
        assert_eq!(t.info(p).bars, 1);
        cells.take(&t, p, 100.0);
        // 3 cells × 10 mW thermal + 1 bar × 5 mW electrical = 35 mW from t = 100.
        assert!((cells.energy_pj(200.0) - 3500.0).abs() < 1e-9);
        // 1 → 1 now has one path left: the other needs input cell 0 in bar.
        let free: Vec<u32> = t.pair(1, 1).filter(|&q| cells.is_free(&t, q)).collect();
        assert_eq!(free.len(), 1);
        // Another flow into output 0 has no free path.
        assert_eq!(cells.choose(&t, 2, 0, Routing::Random, &mut rng), None);
        cells.release(&t, p, 300.0);
        assert!((cells.energy_pj(1000.0) - 7000.0).abs() < 1e-9);
        assert_eq!(t.pair(2, 0).filter(|&q| cells.is_free(&t, q)).count(), 2);
    }
}
