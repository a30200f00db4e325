//! Step 1 of the local re-solve (see maxmin.rs): progressive filling (Bertsekas &
//! Gallager, "Data Networks", §6.5.2) over the flows of S, on the links they use, each link
//! offering the capacity its other (F) flows leave.

use std::cmp::Ordering;

use super::{share, LinkMark, Scratch, EPS};
use crate::fabric::maxmin::MaxMin;

/// Up to this many links, `fill` selects by scanning rather than with candidate queues.
pub(in crate::fabric::maxmin) const SCAN_LINKS: usize = 16;

/// Candidate (share, link) of progressive filling; `Ord` reversed for a min-heap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Share(f64, u32);
impl Eq for Share {}
impl Ord for Share {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
    }
}
impl PartialOrd for Share {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Scratch {
    /// Pops the least candidate of the two sources. Taking the smaller head pops exactly
    /// the sequence one heap holding all entries would (equal entries are identical), while
    /// the bulk of the candidates (the initial ones) costs one sort instead of heap pushes.
    fn next_candidate(&mut self) -> Option<Share> {
        let head = self
            .initial
            .get(self.next_initial)
            .map(|&k| Share(f64::from_bits((k >> 32) as u64), k as u32));
        match (head, self.shares.peek()) {
            (Some(a), Some(b)) if a < *b => self.shares.pop(),
            (Some(a), _) => {
                self.next_initial += 1;
                Some(a)
            }
            (None, _) => self.shares.pop(),
        }
    }
}

impl MaxMin {
    /// Step 1: progressive filling over S on the links it uses, each offering what its F
    /// flows leave. Check (a) runs as each link fixes its S flows.
    ///
    /// Each step fixes the link of least (current share, id). Both strategies below make
    /// exactly that sequence of choices, so they give bit-identical rates: a scan of the
    /// links for the handful a departure or an arrival usually touches, candidate queues
    /// for large sets (a collective step, the first settle of a halo ring).
    pub(in crate::fabric::maxmin) fn fill(&mut self) {
        self.measure_links();
        if self.scratch.s_links.len() <= self.scratch.scan_links {
            self.fill_by_scan();
        } else {
            self.fill_by_queue();
        }
    }

    /// Collects the links S uses, the capacity their F flows leave and their S flows.
    fn measure_links(&mut self) {
        let sc = &mut self.scratch;
        let round = sc.next_stamp();
        sc.round = round;
        let settle = sc.settle;
        sc.s_links.clear();
        sc.unfixed_flows = sc.s_flows.len();
        for &f in &sc.s_flows {
            for &m in &self.flows[f as usize].links {
                let lm = &mut sc.link[m as usize];
                if lm.round != round {
                    lm.round = round;
                    sc.s_links.push(m);
                }
            }
        }
        for &l in &sc.s_links {
            let mut rem = self.capacity[l as usize];
            let mut unfixed = 0u32;
            for &g in &self.link_flows[l as usize] {
                if sc.flow[g as usize].member == settle {
                    unfixed += 1;
                } else {
                    rem -= self.flows[g as usize].rate;
                }
            }
            sc.link[l as usize] = LinkMark {
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
                let lm = &sc.link[l as usize];
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

    /// Selection by candidate queues: the initial shares sorted once, shares that fall
    /// below a link's latest candidate pushed on a heap, stale candidates refreshed when
    /// popped. The least candidate is never above its link's current share, so a popped
    /// candidate equal to its link's share is the least (share, id) of all links. Once
    /// every S flow has its rate, the candidates left are of links with none to fix: they
    /// stay unpopped.
    fn fill_by_queue(&mut self) {
        let sc = &mut self.scratch;
        sc.initial.clear();
        for &l in &sc.s_links {
            let lm = &mut sc.link[l as usize];
            lm.pushed = share(lm.rem, lm.unfixed);
            // Ascending keys = ascending (share, link), the order `Share`'s reversed `Ord`
            // makes heaps pop: shares are >= +0.0, whose bits order as `total_cmp` does.
            sc.initial
                .push(u128::from(lm.pushed.to_bits()) << 32 | u128::from(l));
        }
        sc.initial.sort_unstable();
        sc.next_initial = 0;
        sc.shares.clear();
        while self.scratch.unfixed_flows > 0 {
            let Some(Share(s, l)) = self.scratch.next_candidate() else {
                break;
            };
            let sc = &mut self.scratch;
            let lm = &mut sc.link[l as usize];
            if lm.unfixed == 0 {
                continue;
            }
            let current = share(lm.rem, lm.unfixed);
            if current != s {
                lm.pushed = current;
                sc.shares.push(Share(current, l));
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
        for &f in &self.link_flows[l as usize] {
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
            for &m in &self.flows[f as usize].links {
                let lm = &mut sc.link[m as usize];
                lm.rem -= s;
                lm.unfixed -= 1;
                if lm.unfixed > 0 && m != l {
                    // Shares mostly grow as flows get fixed: a link needs a new entry only
                    // if its share fell below its latest one (stale entries are refreshed
                    // when popped), which keeps the fixing order.
                    let current = share(lm.rem, lm.unfixed);
                    if current < lm.pushed {
                        lm.pushed = current;
                        sc.shares.push(Share(current, m));
                    }
                }
            }
            self.flows[f as usize].bottleneck = l;
        }
    }
}
