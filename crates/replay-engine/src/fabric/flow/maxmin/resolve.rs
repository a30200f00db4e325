//! Steps 0 and 2-4 of the local re-solve behind `MaxMin::settle` (see mod.rs): seeding S
//! from the dirty links, verification of the max-min characterisation around S (Bertsekas
//! & Gallager, "Data Networks", §6.5.2), growing S, and committing the new rates. Step 1
//! (filling) is in fill.rs, the state both steps share in scratch.rs.

use super::{FlowSlot, MaxMin, EPS};

impl MaxMin {
    /// Starts a settle: S := the flows whose remembered bottleneck is a dirty link (a new
    /// flow remembers its first link). The other flows on dirty links keep a bottleneck
    /// nothing touched unless S changes it, which verification then finds; seeding them
    /// too would re-rate every long flow sharing a link with each short one.
    pub(super) fn seed_from_dirty_links(&mut self) {
        let sc = &mut self.scratch;
        let settle = sc.next_stamp();
        sc.settle = settle;
        sc.s_flows.clear();
        // A link whose bucket ran empty offers less: all its flows, whatever their
        // bottleneck, are re-rated (those bottlenecked elsewhere could overload it).
        for &l in &self.shrunk {
            for f in self.links[l as usize].flows(l, &self.spill) {
                let fm = &mut sc.flow[f as usize];
                if fm.member != settle {
                    fm.member = settle;
                    sc.s_flows.push(f);
                }
            }
        }
        self.shrunk.clear();
        for &l in &self.dirty {
            // Dedupes the dirty list; round stamps come later, so this mark never collides.
            let link = &mut self.links[l as usize];
            if link.mark.round == settle {
                continue;
            }
            link.mark.round = settle;
            for f in link.flows(l, &self.spill) {
                let fm = &mut sc.flow[f as usize];
                if fm.member != settle && self.flows[f as usize].bottleneck == l {
                    fm.member = settle;
                    sc.s_flows.push(f);
                }
            }
        }
        self.dirty.clear();
    }

    /// Step 2, check (b): every F flow on a link S uses must keep a bottleneck. Those whose
    /// remembered bottleneck S left untouched keep it (the link is exactly as when it was
    /// verified): `measure_links` listed only the others.
    pub(super) fn verify_neighbours(&mut self) {
        for i in 0..self.scratch.neighbours.len() {
            let g = self.scratch.neighbours[i];
            if !self.keeps_a_bottleneck(g) {
                self.scratch.grow.push(g);
            }
        }
    }

    /// Whether F flow `g`, whose remembered bottleneck S touches, has a bottleneck under
    /// the new rates; remembers the one found.
    fn keeps_a_bottleneck(&mut self, g: FlowSlot) -> bool {
        let b = self.flows[g as usize].bottleneck;
        if self.is_bottleneck(g, b) {
            return true;
        }
        for i in 0..self.flows[g as usize].links().len() {
            let m = self.flows[g as usize].links()[i];
            if m != b && self.is_bottleneck(g, m) {
                self.flows[g as usize].bottleneck = m;
                return true;
            }
        }
        false
    }

    /// Whether link `m` is saturated and no flow on it is faster than `g` (within `EPS`).
    /// (Inlined: verification runs it for most F flows next to S.)
    #[inline(always)]
    fn is_bottleneck(&mut self, g: FlowSlot, m: u32) -> bool {
        let (load, max) = self.load_and_max(m);
        let r = self.scratch.rate_of(g, self.flows[g as usize].rate);
        load >= self.links[m as usize].capacity * (1.0 - EPS) && r >= max * (1.0 - EPS)
    }

    /// Σ rates and the fastest rate on link `m` under the allocation being verified.
    fn load_and_max(&mut self, m: u32) -> (f64, f64) {
        let sc = &self.scratch;
        let (at, load, max) = sc.sums[m as usize];
        if at == sc.round {
            return (load, max);
        }
        let (mut load, mut max) = (0.0, 0.0f64);
        for h in self.links[m as usize].flows(m, &self.spill) {
            let r = sc.rate_of(h, self.flows[h as usize].rate);
            load += r;
            max = max.max(r);
        }
        self.scratch.sums[m as usize] = (sc.round, load, max);
        (load, max)
    }

    /// Step 3: the flows that failed verification join S. Returns whether S grew.
    pub(super) fn expand(&mut self) -> bool {
        let sc = &mut self.scratch;
        let before = sc.s_flows.len();
        for &g in &sc.grow {
            let fm = &mut sc.flow[g as usize];
            if fm.member != sc.settle {
                fm.member = sc.settle;
                sc.s_flows.push(g);
            }
        }
        sc.grow.clear();
        let added = sc.s_flows.len() - before;
        self.stats.expanded += added as u64;
        added > 0
    }

    /// Step 4: S flows take their new rates; a flow whose rate did not change keeps its
    /// byte account and finish-queue entry untouched (its finish time still holds).
    pub(super) fn commit(&mut self, now: f64) {
        let sc = &self.scratch;
        for &f in &sc.s_flows {
            let r = sc.flow[f as usize].new_rate;
            let fl = &mut self.flows[f as usize];
            if r.to_bits() == fl.rate.to_bits() && !fl.finish_at.is_nan() {
                continue;
            }
            fl.remaining = (fl.remaining - fl.rate * (now - fl.updated_at)).max(0.0);
            fl.updated_at = now;
            fl.rate = r;
            let t = if r > 0.0 {
                now + fl.remaining / r
            } else {
                f64::INFINITY
            };
            if t == fl.finish_at {
                continue; // its queue entry still holds
            }
            fl.finish_at = t;
            self.finish.set(f, t);
        }
        self.stats.rerated += sc.s_flows.len() as u64;
        if !self.buckets.is_empty() {
            self.schedule_buckets(now);
        }
    }
}
