//! Dragonfly+ wiring (Shpiner et al., HiPINEB 2017): groups of leaf and spine routers,
//! every leaf linked to every spine of its group (complete bipartite), hosts on the leaves,
//! global links spine ↔ spine between groups. This module is the arithmetic: counts, link
//! numbering, which spine port reaches which group, and where a global link lands.
//!
//! Numbering follows CODES' dragonfly-plus model (`dragonfly_plus_get_assigned_router_id`):
//! endpoints fill a group's leaves in order, `hosts_per_leaf` per leaf. The global links are
//! arranged as the connection files CODES ships (`dfp-test-inter`, `dfp_8k_inter`) have
//! them: spine x of a group links to spine S−1−x of each group it reaches; with h global
//! ports per spine and O = G−1 other groups, either (h ≤ O) the other groups are cut into
//! B = O/h blocks of h consecutive group offsets and spine x serves block x mod B, one
//! cable per group, or (h ≥ O) every spine reaches every group through h/O parallel cables.
//! Both give S·h/O cables between any two groups.

/// Counts that define a Dragonfly+.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub groups: u32,
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Endpoints of a group (≤ leaves × hosts_per_leaf: the last leaves may be partly empty).
    pub endpoints_per_group: u32,
    /// Global ports of every spine (h).
    pub globals_per_spine: u32,
}

/// Link classes, as `LinkClasses` numbers them.
pub const TERMINAL: u8 = 0;
pub const LOCAL: u8 = 1;
pub const GLOBAL: u8 = 2;
pub const CLASS_NAMES: &[&str] = &["terminal", "local", "global"];

/// The wiring of one Dragonfly+: link ids and the global arrangement.
///
/// Links are directed. Endpoint e has an up link (`2e`, host → leaf) and a down link
/// (`2e + 1`); leaf l and spine s of group g share an up link (leaf → spine) and a down
/// link after the terminal links; every spine's global port k is the link leaving through
/// it (the reverse direction is the far end's port).
#[derive(Debug, Clone)]
pub struct Wiring {
    pub shape: Shape,
    local_base: u32,
    global_base: u32,
    links: u32,
    /// When h ≤ O: B, the block of each group offset ((offset − 1) / h, index 0 unused) and
    /// of each spine (x mod B). Every route asks these; tables of a few dozen entries spare
    /// it the integer divisions.
    blocks: u32,
    block_of_offset: Vec<u32>,
    block_of_spine: Vec<u32>,
}

impl Wiring {
    /// Checks the counts (a message saying what does not fit) and numbers the links.
    pub fn new(shape: Shape) -> Result<Self, String> {
        let Shape {
            groups: g,
            leaves: l,
            spines: s,
            hosts_per_leaf,
            endpoints_per_group,
            globals_per_spine: h,
        } = shape;
        if endpoints_per_group == 0 || endpoints_per_group > l * hosts_per_leaf {
            return Err(format!(
                "endpoints_per_group must be in [1, leaves × hosts_per_leaf = {}]",
                l * hosts_per_leaf
            ));
        }
        if g > 1 {
            let other = g - 1;
            if h == 0 {
                return Err("several groups need global_links_per_spine >= 1".into());
            }
            let fits = if h <= other {
                other % h == 0 && s % (other / h) == 0
            } else {
                h % other == 0
            };
            if !fits {
                return Err(format!(
                    "{g} groups, {s} spines with {h} global links each cannot be wired evenly: \
                     need (groups−1) divisible by global_links_per_spine and spines divisible \
                     by their quotient, or global_links_per_spine a multiple of groups−1"
                ));
            }
        }
        let endpoints = u64::from(g) * u64::from(endpoints_per_group);
        let locals = 2 * u64::from(g) * u64::from(l) * u64::from(s);
        let globals = u64::from(g) * u64::from(s) * u64::from(if g > 1 { h } else { 0 });
        let links = 2 * endpoints + locals + globals;
        if links >= u64::from(u32::MAX) || endpoints > 1 << 24 {
            return Err("more than 2^24 endpoints or 2^32 links".into());
        }
        let blocked = g > 1 && h < g; // h ≤ O
        let blocks = if blocked { (g - 1) / h } else { 0 };
        let (block_of_offset, block_of_spine) = if blocked {
            let offsets = (0..g).map(|o| o.saturating_sub(1) / h).collect();
            (offsets, (0..s).map(|x| x % blocks).collect())
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Self {
            shape,
            local_base: (2 * endpoints) as u32,
            global_base: (2 * endpoints + locals) as u32,
            links: links as u32,
            blocks,
            block_of_offset,
            block_of_spine,
        })
    }

    pub fn endpoints(&self) -> u32 {
        self.shape.groups * self.shape.endpoints_per_group
    }

    pub fn links(&self) -> u32 {
        self.links
    }

    pub fn routers(&self) -> u32 {
        self.shape.groups * (self.shape.leaves + self.shape.spines)
    }

    /// Global cables (each link pair counted once).
    pub fn global_cables(&self) -> u32 {
        (self.global_base..self.links).len() as u32 / 2
    }

    /// Cables between any two groups: S·h / (G−1).
    pub fn cables_per_group_pair(&self) -> u32 {
        let s = &self.shape;
        if s.groups < 2 {
            return 0;
        }
        s.spines * s.globals_per_spine / (s.groups - 1)
    }

    pub fn group_of(&self, e: u32) -> u32 {
        e / self.shape.endpoints_per_group
    }

    /// Leaf of an endpoint within its group.
    pub fn leaf_of(&self, e: u32) -> u32 {
        (e % self.shape.endpoints_per_group) / self.shape.hosts_per_leaf
    }

    pub fn class_of(&self, link: u32) -> u8 {
        if link < self.local_base {
            TERMINAL
        } else if link < self.global_base {
            LOCAL
        } else {
            GLOBAL
        }
    }

    /// (group, leaf, spine) a local link joins.
    pub fn local_ends(&self, link: u32) -> (u32, u32, u32) {
        debug_assert_eq!(self.class_of(link), LOCAL);
        let s = &self.shape;
        let pair = (link - self.local_base) / 2;
        let (group_leaf, spine) = (pair / s.spines, pair % s.spines);
        (group_leaf / s.leaves, group_leaf % s.leaves, spine)
    }

    /// (group, spine) at the far end of a global link.
    pub fn global_far_end(&self, link: u32) -> (u32, u32) {
        debug_assert_eq!(self.class_of(link), GLOBAL);
        let h = self.shape.globals_per_spine;
        let i = link - self.global_base;
        let (group_spine, port) = (i / h, i % h);
        let spines = self.shape.spines;
        self.far_end(group_spine / spines, group_spine % spines, port)
    }

    /// Whether a local link goes leaf → spine (`leaf_up`; spine → leaf otherwise).
    pub fn local_goes_up(&self, link: u32) -> bool {
        debug_assert_eq!(self.class_of(link), LOCAL);
        (link - self.local_base).is_multiple_of(2)
    }

    pub fn terminal_up(&self, e: u32) -> u32 {
        2 * e
    }

    pub fn terminal_down(&self, e: u32) -> u32 {
        2 * e + 1
    }

    fn local_pair(&self, group: u32, leaf: u32, spine: u32) -> u32 {
        let s = &self.shape;
        self.local_base + 2 * ((group * s.leaves + leaf) * s.spines + spine)
    }

    /// Leaf → spine in a group.
    pub fn leaf_up(&self, group: u32, leaf: u32, spine: u32) -> u32 {
        self.local_pair(group, leaf, spine)
    }

    /// Spine → leaf in a group.
    pub fn spine_down(&self, group: u32, spine: u32, leaf: u32) -> u32 {
        self.local_pair(group, leaf, spine) + 1
    }

    /// The link leaving spine `spine` of `group` through its global port `port`.
    pub fn global(&self, group: u32, spine: u32, port: u32) -> u32 {
        let s = &self.shape;
        self.global_base + (group * s.spines + spine) * s.globals_per_spine + port
    }

    /// Group offset (1..G−1) a global port reaches, and which parallel cable it is.
    fn port_target(&self, spine: u32, port: u32) -> (u32, u32) {
        let s = &self.shape;
        let (other, h) = (s.groups - 1, s.globals_per_spine);
        if h <= other {
            (1 + self.block_of_spine[spine as usize] * h + port, 0)
        } else {
            (1 + port % other, port / other)
        }
    }

    /// (group, spine) at the far end of a global port.
    pub fn far_end(&self, group: u32, spine: u32, port: u32) -> (u32, u32) {
        let (offset, _) = self.port_target(spine, port);
        (self.wrap(group + offset), self.shape.spines - 1 - spine)
    }

    /// Global ports of spine `spine` in `group` that lead to group `to` (≠ group), appended
    /// to `out`.
    pub fn ports_to(&self, group: u32, spine: u32, to: u32, out: &mut Vec<u32>) {
        let s = &self.shape;
        let (other, h) = (s.groups - 1, s.globals_per_spine);
        let offset = self.offset(group, to);
        debug_assert!(offset != 0);
        if h <= other {
            let block = self.block_of_offset[offset as usize];
            if self.block_of_spine[spine as usize] == block {
                out.push(offset - 1 - block * h);
            }
        } else {
            out.extend((0..h / other).map(|p| p * other + offset - 1));
        }
    }

    /// Whether spine `spine` of `group` has a global link to group `to`.
    pub fn reaches(&self, group: u32, spine: u32, to: u32) -> bool {
        let s = &self.shape;
        let (other, h) = (s.groups - 1, s.globals_per_spine);
        h > other
            || self.block_of_spine[spine as usize]
                == self.block_of_offset[self.offset(group, to) as usize]
    }

    /// The spines of `group` with a global link to group `to` (≠ group), in ascending
    /// order: exactly those `reaches` accepts, stepped through without testing each.
    pub fn spines_reaching(&self, group: u32, to: u32) -> impl Iterator<Item = u32> {
        let s = &self.shape;
        let (other, h, spines) = (s.groups - 1, s.globals_per_spine, s.spines);
        let (first, k) = if h > other {
            (0, 1)
        } else {
            (
                self.block_of_offset[self.offset(group, to) as usize],
                self.blocks,
            )
        };
        // Stepped by hand: `step_by` divides to size itself.
        std::iter::successors(Some(first).filter(|&x| x < spines), move |&x| {
            Some(x + k).filter(|&n| n < spines)
        })
    }

    /// Offset (0..G) from `group` to group `to`, without a division.
    fn offset(&self, group: u32, to: u32) -> u32 {
        self.wrap(to + self.shape.groups - group)
    }

    /// A group number in 0..2G brought into 0..G.
    fn wrap(&self, g: u32) -> u32 {
        let groups = self.shape.groups;
        if g >= groups {
            g - groups
        } else {
            g
        }
    }

    /// Distinct minimal paths between two leaves (router to router): through any spine in
    /// one group; through any global cable between two groups.
    pub fn minimal_paths(&self, group_a: u32, group_b: u32) -> u32 {
        if group_a == group_b {
            self.shape.spines
        } else {
            self.cables_per_group_pair()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(groups: u32, spines: u32, h: u32) -> Shape {
        Shape {
            groups,
            leaves: spines,
            spines,
            hosts_per_leaf: 2,
            endpoints_per_group: 2 * spines,
            globals_per_spine: h,
        }
    }

    #[test]
    fn every_global_port_has_one_partner_that_points_back() {
        for (g, s, h) in [(5, 4, 4), (33, 16, 16), (4, 16, 12), (9, 4, 2), (3, 2, 4)] {
            let w = Wiring::new(shape(g, s, h)).unwrap();
            let mut seen = std::collections::HashMap::new();
            for group in 0..g {
                for to in (0..g).filter(|&t| t != group) {
                    let stepped: Vec<u32> = w.spines_reaching(group, to).collect();
                    let tested: Vec<u32> = (0..s).filter(|&x| w.reaches(group, x, to)).collect();
                    assert_eq!(stepped, tested, "{g} {s} {h}: {group} -> {to}");
                }
                for spine in 0..s {
                    for port in 0..h {
                        let (g2, s2) = w.far_end(group, spine, port);
                        assert_ne!(g2, group);
                        assert!(w.reaches(group, spine, g2));
                        let mut back = Vec::new();
                        w.ports_to(g2, s2, group, &mut back);
                        assert!(!back.is_empty(), "{g} {s} {h}: no way back");
                        *seen.entry((group, g2)).or_insert(0u32) += 1;
                    }
                }
            }
            assert!(seen.values().all(|&c| c == w.cables_per_group_pair()));
            assert_eq!(seen.len() as u32, g * (g - 1));
        }
        assert!(Wiring::new(shape(4, 16, 5)).is_err());
        assert!(Wiring::new(shape(33, 15, 16)).is_err());
    }

    #[test]
    fn link_ids_are_dense_and_classed() {
        let w = Wiring::new(shape(5, 4, 4)).unwrap();
        assert_eq!(w.endpoints(), 40);
        assert_eq!(w.class_of(w.terminal_down(39)), TERMINAL);
        assert_eq!(w.class_of(w.leaf_up(0, 0, 0)), LOCAL);
        assert_eq!(w.class_of(w.spine_down(4, 3, 3)), LOCAL);
        assert_eq!(w.class_of(w.global(0, 0, 0)), GLOBAL);
        assert_eq!(w.global(4, 3, 3), w.links() - 1);
        assert_eq!(w.global_cables(), 5 * 4 * 4 / 2);
    }
}
