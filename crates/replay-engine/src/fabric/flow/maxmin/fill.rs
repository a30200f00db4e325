//! Step 1 of the local re-solve (see mod.rs): progressive filling (Bertsekas &
//! Gallager, "Data Networks", §6.5.2) over the flows of S, on the links they use, each link
//! offering the capacity its other (F) flows leave.

use std::cmp::Reverse;

use super::scratch::{candidate, LinkMark};
use super::{share, MaxMin, EPS};

impl MaxMin {
    /// Step 1: progressive filling over S on the links it uses, each offering what its F
    /// flows leave. Check (a) runs as each link fixes its S flows.
    ///
    /// Each step fixes the link of least (current share, id). Both strategies below make
    /// exactly that sequence of choices, so they give bit-identical rates: a scan of the
    /// links for the handful a departure or an arrival usually touches, a candidate queue
    /// for large sets (a collective step, the first settle of a halo ring).
    pub(super) fn fill(&mut self, now: f64) {
        self.collect_links();
        if !self.buckets.is_empty() {
            self.refill_buckets(now);
        }
        self.measure_links();
        if self.scratch.s_links.len() <= self.scratch.scan_links {
            self.fill_by_scan();
        } else {
            self.fill_by_queue();
        }
    }

    /// Starts a round: collects the links S uses.
    fn collect_links(&mut self) {
        let sc = &mut self.scratch;
        let round = sc.next_stamp();
        sc.round = round;
        sc.s_links.clear();
        sc.unfixed_flows = sc.s_flows.len();
        for &f in &sc.s_flows {
            for &m in self.flows[f as usize].links() {
                let lm = &mut self.links[m as usize].mark;
                if lm.round != round {
                    lm.round = round;
                    sc.s_links.push(m);
                }
            }
        }
    }

    /// Measures the links S uses: the capacity their F flows leave and their S flows, and
    /// the F flows there that check (b) has to verify.
    fn measure_links(&mut self) {
        let sc = &mut self.scratch;
        let (round, settle) = (sc.round, sc.settle);
        sc.neighbours.clear();
        for &l in &sc.s_links {
            let link = &self.links[l as usize];
            let mut rem = link.capacity;
            let mut unfixed = 0u32;
            for g in link.flows(l, &self.spill) {
                let fm = &mut sc.flow[g as usize];
                if fm.member == settle {
                    unfixed += 1;
                    continue;
                }
                let flow = &self.flows[g as usize];
                rem -= flow.rate;
                if fm.checked != round {
                    fm.checked = round;
                    // An F flow whose bottleneck S does not touch keeps it (check (b)).
                    if self.links[flow.bottleneck as usize].mark.round == round {
                        sc.neighbours.push(g);
                    }
                }
            }
            self.links[l as usize].mark = LinkMark {
                round,
                rem,
                unfixed,
                // Below every share, so that `fix_link` pushes no candidates unless
                // `fill_by_queue` sets it.
                pushed: -1.0,
            };
        }
    }

    /// Selection by scanning every link of S at every step (quadratic, no queues).
    fn fill_by_scan(&mut self) {
        while self.scratch.unfixed_flows > 0 {
            let sc = &self.scratch;
            let mut best: Option<(f64, u32)> = None;
            for &l in &sc.s_links {
                let lm = &self.links[l as usize].mark;
                if lm.unfixed > 0 {
                    let s = share(lm.rem, lm.unfixed);
                    if best.is_none_or(|(bs, bl)| s < bs || (s == bs && l < bl)) {
                        best = Some((s, l));
                    }
                }
            }
            let Some((s, l)) = best else { break };
            self.fix_link(l, s);
        }
    }

    /// Selection by a candidate queue: the initial shares heapified at once, shares that
    /// fall below a link's latest candidate pushed, stale candidates refreshed when popped.
    /// The least candidate is never above its link's current share, so a popped candidate
    /// equal to its link's share is the least (share, id) of all links. Once every S flow
    /// has its rate, the candidates left are of links with none to fix: they stay unpopped.
    ///
    /// A link with one S flow keeps its share until that flow is fixed (nothing else
    /// changes what it has left), then has nothing to fix: of a flow's such links only the
    /// least can be popped with work to do, so it alone is a candidate. (A collective step's
    /// flows cross many links no other S flow uses.)
    fn fill_by_queue(&mut self) {
        let sc = &mut self.scratch;
        let mut initial = std::mem::take(&mut sc.candidates).into_vec();
        initial.clear();
        for &l in &sc.s_links {
            let lm = &mut self.links[l as usize].mark;
            lm.pushed = share(lm.rem, lm.unfixed);
            if lm.unfixed > 1 {
                initial.push(candidate(lm.pushed, l));
            }
        }
        for &f in &sc.s_flows {
            let least = self.flows[f as usize]
                .links()
                .iter()
                .filter(|&&m| self.links[m as usize].mark.unfixed == 1)
                .map(|&m| candidate(self.links[m as usize].mark.pushed, m))
                .max(); // the least key (`Candidate` orders reversed)
            initial.extend(least);
        }
        sc.candidates = initial.into();
        while self.scratch.unfixed_flows > 0 {
            let Some(Reverse(key)) = self.scratch.candidates.pop() else {
                break;
            };
            let (s, l) = (f64::from_bits((key >> 32) as u64), key as u32);
            let sc = &mut self.scratch;
            let lm = &mut self.links[l as usize].mark;
            if lm.unfixed == 0 {
                continue;
            }
            let current = share(lm.rem, lm.unfixed);
            if current != s {
                lm.pushed = current;
                sc.candidates.push(candidate(current, l));
                continue;
            }
            self.fix_link(l, s);
        }
    }

    /// Gives share `s` to every unfixed S flow on link `l` (their candidate bottleneck), and
    /// flags the F flows on `l` faster than `s` (check (a): `l` would not be a bottleneck).
    /// (Inlined into both selection loops: it runs once per step, often for one flow.)
    #[inline(always)]
    fn fix_link(&mut self, l: u32, s: f64) {
        let sc = &mut self.scratch;
        let (settle, round) = (sc.settle, sc.round);
        // By index: fixing a flow updates the marks of its links, `l`'s among them.
        for i in 0..self.links[l as usize].len as usize {
            let f = self.links[l as usize].flow(l, &self.spill, i);
            let fm = &mut sc.flow[f as usize];
            if fm.member != settle {
                if self.flows[f as usize].rate > s * (1.0 + EPS) {
                    sc.grow.push(f);
                }
                continue;
            }
            if fm.fixed == round {
                continue;
            }
            fm.fixed = round;
            fm.new_rate = s;
            sc.unfixed_flows -= 1;
            for &m in self.flows[f as usize].links() {
                let lm = &mut self.links[m as usize].mark;
                lm.rem -= s;
                lm.unfixed -= 1;
                if lm.unfixed > 0 && m != l {
                    // Shares mostly grow as flows get fixed: a link needs a new entry only
                    // if its share fell below its latest one (stale entries are refreshed
                    // when popped), which keeps the fixing order.
                    let current = share(lm.rem, lm.unfixed);
                    if current < lm.pushed {
                        lm.pushed = current;
                        sc.candidates.push(candidate(current, m));
                    }
                }
            }
            self.flows[f as usize].bottleneck = l;
        }
    }
}
