//! Route choice on a Dragonfly+ as CODES' dragonfly-plus model makes it
//! (src/networks/model-net/dragonfly-plus.cxx), one decision per router, here all taken
//! when a transfer enters the network (a flow-level model has no packet in flight to
//! re-decide later), each on the link load at that instant.
//!
//! - Inside a group every routing is minimal (`do_dfp_routing`): leaf → least-loaded
//!   spine → leaf.
//! - **minimal** (`dfp_minimal_routing`): the least-loaded up link to a spine that reaches
//!   the destination group, then a uniformly random global port to it.
//! - **valiant** (`dfp_nonminimal_leaf_routing`): through an intermediate group drawn
//!   uniformly among the others (`dfp_select_intermediate_group`, source and destination
//!   excluded; re-drawn among the spine's own reach if the chosen spine has no link to it),
//!   down to its least-loaded leaf, then minimally to the destination.
//! - **adaptive** (`dfp_prog_adaptive_routing`, progressive): at the source leaf and again
//!   at the source spine, the best minimal and the best non-minimal next link are scored
//!   by their load (`dfp_score_connection`, DELTA metric: the non-minimal score doubled);
//!   minimal unless its score exceeds both the threshold and the doubled non-minimal
//!   score. Intermediate spines go down to a leaf (`int_spine_consider_min` = false).
//! - **fully_adaptive** (Shpiner et al. 2017's fully progressive adaptive routing,
//!   `dfp_fully_prog_adaptive_routing`): as adaptive, and the intermediate group's spine
//!   re-decides: straight to the destination group when its own global link there scores
//!   no worse, instead of the detour through a leaf.
//!
//! Best-of choices follow CODES: local links the absolute least loaded
//! (`get_absolute_best_connection_from_conns`), global links the better of two drawn at
//! random (`get_best_connection_from_conns`), ties broken at random. The load score of a
//! link is the number of flows crossing it (CODES counts buffered bytes of a port).

use super::wiring::Wiring;
use crate::prng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    Minimal,
    Valiant,
    Adaptive,
    FullyAdaptive,
}

impl Routing {
    pub const NAMES: &'static [&'static str] =
        &["minimal", "valiant", "adaptive", "fully_adaptive"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "minimal" => Some(Self::Minimal),
            "valiant" => Some(Self::Valiant),
            "adaptive" => Some(Self::Adaptive),
            "fully_adaptive" => Some(Self::FullyAdaptive),
            _ => None,
        }
    }

    /// Whether the routing ever leaves the minimal paths (needs a third group).
    pub fn detours(self) -> bool {
        self != Self::Minimal
    }
}

/// CODES' DELTA metric: a non-minimal port's score counts twice.
const NON_MINIMAL_WEIGHT: usize = 2;

/// One route choice: the wiring, the current load (flows per link) and the dice.
pub struct Chooser<'a> {
    pub wiring: &'a Wiring,
    pub flows: &'a dyn Fn(u32) -> usize,
    pub rng: &'a mut SplitMix64,
    pub routing: Routing,
    /// Minimal whenever its score is at most this (CODES `adaptive_threshold`).
    pub threshold: usize,
    /// Scratch for a spine's global ports towards a group, kept by the caller across
    /// routes: no allocation per route.
    pub ports: &'a mut Vec<u32>,
}

impl Chooser<'_> {
    /// The links between the two terminal links of a transfer from endpoint `src` to
    /// `dst` (different endpoints), appended to `links`; true when the route detours
    /// through an intermediate group.
    pub fn route(&mut self, src: u32, dst: u32, links: &mut Vec<u32>) -> bool {
        let w = self.wiring;
        let (gs, gd) = (w.group_of(src), w.group_of(dst));
        let (ls, ld) = (w.leaf_of(src), w.leaf_of(dst));
        if gs == gd {
            if ls != ld {
                let (s, _) =
                    self.least_loaded((0..w.shape.spines).map(|s| (s, w.leaf_up(gs, ls, s))));
                links.push(w.leaf_up(gs, ls, s));
                links.push(w.spine_down(gs, s, ld));
            }
            return false;
        }
        if self.routing == Routing::Minimal {
            let s = self.spine_towards(gs, ls, gd).0;
            links.push(w.leaf_up(gs, ls, s));
            let ports = &mut *self.ports;
            ports.clear();
            w.ports_to(gs, s, gd, ports);
            let port = ports[self.rng.below(ports.len() as u64) as usize];
            self.land(gs, s, port, ld, links);
            return false;
        }
        let mut gi = self.intermediate(gs, gd);
        let s = match self.routing {
            Routing::Valiant => self.spine_towards(gs, ls, gi).0,
            _ => {
                let (min, min_score) = self.spine_towards(gs, ls, gd);
                let (intm, intm_score) = self.spine_towards(gs, ls, gi);
                if self.minimal_wins(Some(min_score), Some(intm_score)) {
                    min
                } else {
                    intm
                }
            }
        };
        links.push(w.leaf_up(gs, ls, s));
        if !w.reaches(gs, s, gi) {
            gi = self.intermediate_reached_by(gs, s, gd);
        }
        self.at_source_spine(gs, s, gi, gd, ld, links)
    }

    /// The source spine's decision (adaptive routings; Valiant always detours): towards
    /// destination group `gd`, leaf `ld`, or through intermediate group `gi` (which
    /// `spine` reaches); the links from the spine on appended. True when it detours.
    fn at_source_spine(
        &mut self,
        gs: u32,
        spine: u32,
        gi: u32,
        gd: u32,
        ld: u32,
        links: &mut Vec<u32>,
    ) -> bool {
        let intm = self
            .global_port(gs, spine, gi)
            .expect("the spine reaches gi");
        if self.routing != Routing::Valiant {
            let min = self.global_port(gs, spine, gd);
            if self.minimal_wins(min.map(|m| m.1), Some(intm.1)) {
                let (port, _) = min.expect("minimal_wins needs a minimal port");
                self.land(gs, spine, port, ld, links);
                return false;
            }
        }
        links.push(self.wiring.global(gs, spine, intm.0));
        let (gi, si) = self.wiring.far_end(gs, spine, intm.0);
        self.at_intermediate_spine(gi, si, gd, ld, links);
        true
    }

    /// A detour from spine `si` of intermediate group `gi` on (down to its least-loaded
    /// leaf, or, fully adaptive, straight to `gd` when that scores no worse), appended.
    fn at_intermediate_spine(&mut self, gi: u32, si: u32, gd: u32, ld: u32, links: &mut Vec<u32>) {
        let w = self.wiring;
        let leaves = (0..w.shape.leaves).map(|l| (l, w.spine_down(gi, si, l)));
        let (li, down_score) = self.least_loaded(leaves);
        if self.routing == Routing::FullyAdaptive {
            if let Some((port, score)) = self.global_port(gi, si, gd) {
                if self.minimal_wins(Some(score), Some(down_score)) {
                    self.land(gi, si, port, ld, links);
                    return;
                }
            }
        }
        links.push(w.spine_down(gi, si, li));
        let s2 = self.spine_towards(gi, li, gd).0;
        links.push(w.leaf_up(gi, li, s2));
        let (port, _) = self.global_port(gi, s2, gd).expect("the spine reaches gd");
        self.land(gi, s2, port, ld, links);
    }

    /// Progressive adaptive routing of a packet decided again where it stands (CODES'
    /// dfp_prog_adaptive_routing runs at every router the chunk reaches): `links` is its
    /// route from the source endpoint to `dst`, of which the first `taken` are crossed.
    /// At the source spine (2 crossed, another group) the minimal / intermediate choice is
    /// made again, the intermediate group drawn again (CODES presets it at the source
    /// and re-draws at a spine that has no link to it); at an intermediate group's spine
    /// (3 crossed, a detour) its down / straight choice. The rest of the route replaces
    /// the old one; true when the route detours. None where nothing is decided.
    pub fn reroute(
        &mut self,
        src: u32,
        dst: u32,
        links: &mut Vec<u32>,
        taken: usize,
    ) -> Option<bool> {
        if !matches!(self.routing, Routing::Adaptive | Routing::FullyAdaptive) {
            return None;
        }
        let w = self.wiring;
        let (gs, gd) = (w.group_of(src), w.group_of(dst));
        let ld = w.leaf_of(dst);
        if gs == gd {
            return None;
        }
        match taken {
            2 => {
                let (_, _, spine) = w.local_ends(links[1]);
                links.truncate(2);
                let mut gi = self.intermediate(gs, gd);
                if !w.reaches(gs, spine, gi) {
                    gi = self.intermediate_reached_by(gs, spine, gd);
                }
                Some(self.at_source_spine(gs, spine, gi, gd, ld, links))
            }
            3 => {
                let (gi, si) = w.global_far_end(links[2]);
                if gi == gd {
                    return None;
                }
                links.truncate(3);
                self.at_intermediate_spine(gi, si, gd, ld, links);
                Some(true)
            }
            _ => None,
        }
    }

    /// CODES' decision (LOWER is better): minimal when its score is within the threshold
    /// or no worse than the weighted non-minimal one; a missing side loses.
    fn minimal_wins(&self, min: Option<usize>, intm: Option<usize>) -> bool {
        match (min, intm) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(m), Some(i)) => m <= self.threshold || m <= NON_MINIMAL_WEIGHT * i,
        }
    }

    /// The global link out of `spine`, then down from the far spine to leaf `leaf`.
    fn land(&self, group: u32, spine: u32, port: u32, leaf: u32, links: &mut Vec<u32>) {
        let w = self.wiring;
        links.push(w.global(group, spine, port));
        let (g2, s2) = w.far_end(group, spine, port);
        links.push(w.spine_down(g2, s2, leaf));
    }

    /// The least-loaded up link from leaf `leaf` of `group` to a spine reaching `to`.
    fn spine_towards(&mut self, group: u32, leaf: u32, to: u32) -> (u32, usize) {
        let w = self.wiring;
        let spines = w
            .spines_reaching(group, to)
            .map(|s| (s, w.leaf_up(group, leaf, s)));
        self.least_loaded(spines)
    }

    /// The better of two random global ports of `spine` towards `to` (None: it has none).
    fn global_port(&mut self, group: u32, spine: u32, to: u32) -> Option<(u32, usize)> {
        let w = self.wiring;
        let ports = &mut *self.ports;
        ports.clear();
        w.ports_to(group, spine, to, ports);
        match ports.len() {
            0 => None,
            1 => Some((ports[0], (self.flows)(w.global(group, spine, ports[0])))),
            n => {
                let a = ports[self.rng.below(n as u64) as usize];
                let b = ports[self.rng.below(n as u64) as usize];
                let pair = [a, b].map(|p| (p, w.global(group, spine, p)));
                Some(self.least_loaded(pair.into_iter()))
            }
        }
    }

    /// The (choice, link) with the fewest flows on its link; ties at random.
    fn least_loaded(&mut self, candidates: impl Iterator<Item = (u32, u32)>) -> (u32, usize) {
        let mut best = (u32::MAX, usize::MAX);
        let mut ties = 0u64;
        for (choice, link) in candidates {
            let score = (self.flows)(link);
            if score < best.1 {
                best = (choice, score);
                ties = 1;
            } else if score == best.1 {
                ties += 1;
                if self.rng.below(ties) == 0 {
                    best.0 = choice;
                }
            }
        }
        debug_assert!(ties > 0, "no candidate");
        best
    }

    /// A group other than `gs` and `gd`, uniformly.
    fn intermediate(&mut self, gs: u32, gd: u32) -> u32 {
        let g = self.wiring.shape.groups;
        let mut pick = self.rng.below(u64::from(g - 2)) as u32;
        for skip in [gs.min(gd), gs.max(gd)] {
            if pick >= skip {
                pick += 1;
            }
        }
        pick
    }

    /// A group the source spine reaches other than `gs` and `gd`, uniformly.
    fn intermediate_reached_by(&mut self, gs: u32, spine: u32, gd: u32) -> u32 {
        let w = self.wiring;
        let reach: Vec<u32> = (0..w.shape.groups)
            .filter(|&g| g != gs && g != gd && w.reaches(gs, spine, g))
            .collect();
        reach[self.rng.below(reach.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::dragonfly::wiring::{Shape, GLOBAL};
    use std::collections::BTreeSet;

    fn wiring(groups: u32, spines: u32, h: u32) -> Wiring {
        Wiring::new(Shape {
            groups,
            leaves: spines,
            spines,
            hosts_per_leaf: 4,
            endpoints_per_group: 4 * spines,
            globals_per_spine: h,
        })
        .unwrap()
    }

    fn routes(
        w: &Wiring,
        routing: Routing,
        flows: &dyn Fn(u32) -> usize,
        src: u32,
        dst: u32,
    ) -> BTreeSet<(Vec<u32>, bool)> {
        let mut rng = SplitMix64::new(1);
        let mut out = BTreeSet::new();
        let mut ports = Vec::new();
        for _ in 0..2000 {
            let mut links = Vec::new();
            let mut c = Chooser {
                wiring: w,
                flows,
                rng: &mut rng,
                routing,
                threshold: 0,
                ports: &mut ports,
            };
            let detour = c.route(src, dst, &mut links);
            out.insert((links, detour));
        }
        out
    }

    #[test]
    fn idle_networks_route_minimally_over_every_minimal_path() {
        let w = wiring(5, 4, 4);
        let idle = |_: u32| 0;
        for routing in [Routing::Minimal, Routing::Adaptive, Routing::FullyAdaptive] {
            let r = routes(&w, routing, &idle, 0, 16 * 3 + 5);
            assert!(r.iter().all(|(l, d)| !d && l.len() == 3), "{routing:?}");
            assert_eq!(r.len() as u32, w.minimal_paths(0, 3));
            let inside = routes(&w, routing, &idle, 0, 5);
            assert_eq!(inside.len() as u32, w.minimal_paths(0, 0));
        }
        let valiant = routes(&w, Routing::Valiant, &idle, 0, 16 * 3 + 5);
        assert!(valiant.iter().all(|(l, d)| *d && l.len() == 6));
        let globals = |l: &Vec<u32>| l.iter().filter(|&&x| w.class_of(x) == GLOBAL).count();
        assert!(valiant.iter().all(|(l, _)| globals(l) == 2));
    }

    #[test]
    fn adaptive_detours_when_minimal_global_links_are_loaded() {
        let w = wiring(5, 4, 4);
        // Every global link into group 3 is busy: adaptive goes around, minimal does not.
        let busy = |l: u32| {
            if w.class_of(l) == GLOBAL {
                let global_base = w.global(0, 0, 0);
                let (port, spine_global) = ((l - global_base) % 4, (l - global_base) / 4);
                let (g, s) = (spine_global / 4, spine_global % 4);
                usize::from(w.far_end(g, s, port).0 == 3) * 10
            } else {
                0
            }
        };
        let adaptive = routes(&w, Routing::Adaptive, &busy, 0, 16 * 3);
        assert!(adaptive.iter().all(|(_, d)| *d));
        let minimal = routes(&w, Routing::Minimal, &busy, 0, 16 * 3);
        assert!(minimal.iter().all(|(_, d)| !d));
    }
}
