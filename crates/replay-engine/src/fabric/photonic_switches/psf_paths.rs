//! The paths of a photonic switching fabric (PSF) of 2×2 MZI cells, precomputed once the
//! way seed 000's controller does at boot (§III-A: "the controller generates and stores
//! pre-computed paths for the source-destination pairs"), with what routing ranks them by
//! and their insertion loss (Table II(a)).
//!
//! Layouts: the Beneš network (benes.rs; N/2 paths per pair) and the MZI crossbar (one path
//! per pair: input i runs along row i in cross cells, turns down at cell (i, j) in the bar
//! state and runs down column j in cross cells; no waveguide crossings; non-blocking).

use std::ops::Range;

use super::benes::Benes;

/// Insertion loss of the fabric's parts (seed 000 Table II(a)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Losses {
    pub bar_db: f64,
    pub cross_db: f64,
    pub crossing_db: f64,
    pub propagation_db_per_cm: f64,
    /// Waveguide length per cell crossed (the cell and its share of the wiring), µm.
    pub cell_length_um: f64,
}

/// What a path costs and how routing ranks it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathInfo {
    start: u32,
    len: u16,
    pub bars: u16,
    pub crossings: u16,
    pub loss_db: f64,
}

impl PathInfo {
    pub fn cells(&self) -> u32 {
        u32::from(self.len)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Benes,
    Crossbar,
}

#[derive(Debug, Clone)]
pub struct PathTable {
    ports: u32,
    cells: u32,
    per_pair: u32,
    /// Hops of every path back to back: cell << 1 | bar.
    hops: Vec<u32>,
    paths: Vec<PathInfo>,
}

impl PathTable {
    pub fn new(layout: Layout, ports: u32, losses: &Losses) -> Result<Self, String> {
        match layout {
            Layout::Benes => Self::benes(ports, losses),
            Layout::Crossbar => Self::crossbar(ports, losses),
        }
    }

    fn benes(ports: u32, losses: &Losses) -> Result<Self, String> {
        let b = Benes::new(ports)?;
        let mut t = Self::empty(ports, b.cells(), ports / 2);
        for src in 0..ports {
            for dst in 0..ports {
                for p in b.paths(src, dst) {
                    let hops = p.hops.iter().map(|h| (h.cell, h.bar));
                    t.push(hops, p.crossings, losses);
                }
            }
        }
        Ok(t)
    }

    fn crossbar(ports: u32, losses: &Losses) -> Result<Self, String> {
        if !(1..=Benes::MAX_PORTS).contains(&ports) {
            return Err(format!(
                "a crossbar PSF needs 1 to {} ports, got {ports}",
                Benes::MAX_PORTS
            ));
        }
        let cell = |row: u32, col: u32| row * ports + col;
        let mut t = Self::empty(ports, ports * ports, 1);
        for src in 0..ports {
            for dst in 0..ports {
                let along = (0..dst).map(|c| (cell(src, c), false));
                let turn = std::iter::once((cell(src, dst), true));
                let down = (src + 1..ports).map(|r| (cell(r, dst), false));
                t.push(along.chain(turn).chain(down), 0, losses);
            }
        }
        Ok(t)
    }

    fn empty(ports: u32, cells: u32, per_pair: u32) -> Self {
        Self {
            ports,
            cells,
            per_pair,
            hops: Vec::new(),
            paths: Vec::with_capacity((ports * ports * per_pair) as usize),
        }
    }

    fn push(&mut self, hops: impl Iterator<Item = (u32, bool)>, crossings: u32, l: &Losses) {
        let start = self.hops.len() as u32;
        self.hops
            .extend(hops.map(|(c, bar)| c << 1 | u32::from(bar)));
        let seq = &self.hops[start as usize..];
        let bars = seq.iter().filter(|h| *h & 1 == 1).count() as f64;
        let len = seq.len() as f64;
        let loss_db = bars * l.bar_db
            + (len - bars) * l.cross_db
            + f64::from(crossings) * l.crossing_db
            + len * l.cell_length_um * 1e-4 * l.propagation_db_per_cm;
        self.paths.push(PathInfo {
            start,
            len: seq.len() as u16,
            bars: bars as u16,
            crossings: crossings as u16,
            loss_db,
        });
    }

    pub fn ports(&self) -> u32 {
        self.ports
    }

    pub fn cells(&self) -> u32 {
        self.cells
    }

    /// Indices of the paths from `src` to `dst`.
    pub fn pair(&self, src: u32, dst: u32) -> Range<u32> {
        let first = (src * self.ports + dst) * self.per_pair;
        first..first + self.per_pair
    }

    pub fn info(&self, path: u32) -> &PathInfo {
        &self.paths[path as usize]
    }

    /// (cell, bar) of every hop of `path`.
    pub fn hops(&self, path: u32) -> impl Iterator<Item = (u32, bool)> + '_ {
        let p = &self.paths[path as usize];
        self.hops[p.start as usize..p.start as usize + p.len as usize]
            .iter()
            .map(|h| (h >> 1, h & 1 == 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE_II: Losses = Losses {
        bar_db: 1.4,
        cross_db: 0.4,
        crossing_db: 0.05,
        propagation_db_per_cm: 1.18,
        cell_length_um: 0.0,
    };

    #[test]
    fn losses_add_up_per_path() {
        let t = PathTable::new(Layout::Benes, 4, &TABLE_II).unwrap();
        // 0 → 0 through the upper half: three bar cells, no crossings = 4.2 dB; through
        // the lower half: cross, bar, cross and two crossings = 0.4 + 1.4 + 0.4 + 0.1.
        let mut losses: Vec<f64> = t.pair(0, 0).map(|p| t.info(p).loss_db).collect();
        losses.sort_by(f64::total_cmp);
        assert!((losses[0] - 2.3).abs() < 1e-12 && (losses[1] - 4.2).abs() < 1e-12);
        let with_length = Losses {
            cell_length_um: 5000.0, // 0.5 cm per cell
            ..TABLE_II
        };
        let t = PathTable::new(Layout::Benes, 4, &with_length).unwrap();
        let p = t.pair(0, 0).start;
        let extra = t.info(p).loss_db
            - PathTable::new(Layout::Benes, 4, &TABLE_II)
                .unwrap()
                .info(p)
                .loss_db;
        assert!((extra - 3.0 * 0.5 * 1.18).abs() < 1e-12);
    }

    #[test]
    fn crossbar_paths_turn_once_and_meet_only_at_shared_ends() {
        let t = PathTable::new(Layout::Crossbar, 4, &TABLE_II).unwrap();
        assert_eq!((t.cells(), t.pair(0, 1).len()), (16, 1));
        // Two paths with distinct inputs and outputs never need one cell in two states.
        for (a, b) in [(0u32, 1u32), (1, 3), (2, 0), (3, 2)].iter().zip([
            (1u32, 0u32),
            (3, 1),
            (0, 3),
            (2, 2),
        ]) {
            let pa: Vec<_> = t.hops(t.pair(a.0, a.1).start).collect();
            let pb: Vec<_> = t.hops(t.pair(b.0, b.1).start).collect();
            let clash = pa
                .iter()
                .any(|x| pb.iter().any(|y| x.0 == y.0 && x.1 != y.1));
            assert_eq!(clash, a.0 == b.0 || a.1 == b.1, "{a:?} {b:?}");
        }
        let p = t.info(t.pair(1, 2).start);
        assert_eq!((p.cells(), p.bars), (2 + 1 + 2, 1));
    }
}
