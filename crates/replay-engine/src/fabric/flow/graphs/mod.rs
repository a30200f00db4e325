//! The classic topologies of the flow model — crossbar, k-ary n-tree, 3-D torus — as
//! arithmetic link numberings (no adjacency lists): a route is the list of directed link ids
//! a transfer crosses. Half duplex maps both directions of a cable to one id, so they share
//! its bandwidth. All links are of one class (one capacity, one per-hop latency).

use super::network::{LinkClasses, LinkLoad, Route, Topology};
use crate::fabric::packet::topology::{Hop, PacketTopology};
use crate::fabric::photonic_networks::circuit_net::{walk_by_options, At, HopGraph};
use crate::prng::SplitMix64;

/// Topology graph of the flow model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One switch, every endpoint on its own up/down link.
    Crossbar { endpoints: u32 },
    /// k-ary n-tree (Petrini & Vanneschi 1997): k^n endpoints, n levels of k^(n-1) switches.
    FatTree { k: u32, n: u32 },
    /// 3-D torus, one endpoint per router, dimension-order routing.
    Torus3d { x: u32, y: u32, z: u32 },
}

/// Link sharing of a cable: two independent directions, or one shared by both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplex {
    Full,
    Half,
}

/// How a route is picked among equal-cost paths (fat tree up-ports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Deterministic destination-mod-k (d-mod-k, Zahavi 2010).
    DModK,
    /// A seeded random up-port per flow (ECMP-like).
    Random,
}

#[derive(Debug, Clone)]
pub struct Graph {
    topology: Shape,
    endpoints: u32,
    links: u32,
    half: bool,
    routing: Routing,
    /// Fat tree: k^j for j = 0..=n.
    pow: Vec<u32>,
    hop_latency_ns: f64,
    /// Bytes per ns of every link (also of copies between ranks on one endpoint).
    link_rate: f64,
    classes: LinkClasses,
}

impl Graph {
    /// A graph whose links carry `link_rate` bytes per ns with `hop_latency_ns` each.
    pub fn new(
        topology: Shape,
        duplex: Duplex,
        routing: Routing,
        link_rate: f64,
        hop_latency_ns: f64,
    ) -> Result<Self, String> {
        let half = duplex == Duplex::Half;
        let dirs = if half { 1 } else { 2 };
        let (endpoints, links, pow) = match topology {
            Shape::Crossbar { endpoints } => {
                if endpoints == 0 {
                    return Err("crossbar needs endpoints >= 1".into());
                }
                (endpoints, u64::from(endpoints) * dirs, Vec::new())
            }
            Shape::FatTree { k, n } => {
                if k < 2 || n < 1 {
                    return Err("fat tree needs k >= 2 and n >= 1".into());
                }
                let e = u64::from(k).checked_pow(n).filter(|&e| e <= 1 << 24);
                let e = e.ok_or("fat tree has more than 2^24 endpoints")? as u32;
                let pow: Vec<u32> = (0..=n).map(|j| k.pow(j)).collect();
                // Endpoint links plus, for levels 1..n-1, k up-ports on k^(n-1) switches.
                let per_dir = u64::from(e) + u64::from(n - 1) * u64::from(e);
                (e, per_dir * dirs, pow)
            }
            Shape::Torus3d { x, y, z } => {
                let e = u64::from(x) * u64::from(y) * u64::from(z);
                if e == 0 || e > 1 << 24 {
                    return Err("torus dimensions must be >= 1 and hold <= 2^24 nodes".into());
                }
                // Injection/ejection plus 3 dimensions x 2 directions per node.
                let per_node = if half { 1 + 3 } else { 2 + 6 };
                (e as u32, e * per_node, Vec::new())
            }
        };
        let links = u32::try_from(links).map_err(|_| "too many links".to_string())?;
        let classes = LinkClasses {
            names: &["link"],
            of_link: vec![0; links as usize],
            capacity: vec![link_rate],
            buckets: Vec::new(),
        };
        Ok(Self {
            topology,
            endpoints,
            links,
            half,
            routing,
            pow,
            hop_latency_ns,
            link_rate,
            classes,
        })
    }

    pub fn endpoints(&self) -> u32 {
        self.endpoints
    }

    pub fn links(&self) -> u32 {
        self.links
    }

    /// Links on every shortest route from `src` to `dst` (all have the same length).
    pub fn hops(&self, src: u32, dst: u32) -> u32 {
        if src == dst {
            return 0;
        }
        match self.topology {
            Shape::Crossbar { .. } => 2,
            Shape::FatTree { .. } => 2 * self.fat_tree_turn(src, dst),
            Shape::Torus3d { x, y, z } => {
                let dims = [x, y, z];
                let (mut a, mut b) = (src, dst);
                let mut hops = 2;
                for size in dims {
                    let d = (a % size).abs_diff(b % size);
                    hops += d.min(size - d);
                    a /= size;
                    b /= size;
                }
                hops
            }
        }
    }

    /// Appends the links from `src` to `dst` to `out` (nothing when src == dst). (Inlined
    /// into each flow's submission: a crossbar route is two pushes.)
    #[inline]
    pub fn links_between(&self, src: u32, dst: u32, rng: &mut SplitMix64, out: &mut Vec<u32>) {
        out.clear();
        if src == dst {
            return;
        }
        match self.topology {
            Shape::Crossbar { .. } => {
                out.push(src);
                out.push(self.ejection(dst));
            }
            Shape::FatTree { k, .. } => self.fat_tree_route(k, src, dst, rng, out),
            Shape::Torus3d { x, y, z } => self.torus_route([x, y, z], src, dst, out),
        }
    }

    /// k-ary n-tree. Level-j switches (j = 1..n) are (group g = e / k^j, copy c < k^(j-1)),
    /// index g*k^(j-1) + c; switch (j, g, c) up-port u reaches (j+1, g/k, c + u*k^(j-1)).
    fn fat_tree_route(&self, k: u32, src: u32, dst: u32, rng: &mut SplitMix64, out: &mut Vec<u32>) {
        let p = &self.pow;
        let h = self.fat_tree_turn(src, dst);
        out.push(src);
        let mut c = 0u32; // copy index at the current level
        for j in 1..h {
            let u = match self.routing {
                Routing::DModK => (dst / p[j as usize - 1]) % k,
                Routing::Random => rng.below(u64::from(k)) as u32,
            };
            let g = src / p[j as usize];
            out.push(self.up_link(j, g * p[j as usize - 1] + c, u));
            c += u * p[j as usize - 1];
        }
        // Down: the cable between (j+1, ·, c) and its child (j, g, c mod k^(j-1)) is the child's
        // up-port u = c / k^(j-1).
        for j in (1..h).rev() {
            let child_c = c % p[j as usize - 1];
            let u = c / p[j as usize - 1];
            let g = dst / p[j as usize];
            out.push(self.down_base() + self.up_link(j, g * p[j as usize - 1] + child_c, u));
            c = child_c;
        }
        out.push(self.down_base() + dst);
    }

    /// Fat tree: the lowest level whose subtree holds both endpoints.
    fn fat_tree_turn(&self, src: u32, dst: u32) -> u32 {
        let p = &self.pow;
        let n = p.len() as u32 - 1;
        (1..=n)
            .find(|&j| src / p[j as usize] == dst / p[j as usize])
            .unwrap_or(n)
    }

    /// Fat tree: up-port `u` of level-`j` switch index `s`.
    fn up_link(&self, j: u32, s: u32, u: u32) -> u32 {
        let (k, n) = (self.pow[1], self.pow.len() - 1);
        self.endpoints + ((j - 1) * self.pow[n - 1] + s) * k + u
    }

    /// Fat tree: first link id of the down direction (the up ids again when half duplex).
    fn down_base(&self) -> u32 {
        if self.half {
            0
        } else {
            self.links / 2
        }
    }

    /// Dimension-order routing, shortest direction per dimension (ties go +).
    fn torus_route(&self, dims: [u32; 3], src: u32, dst: u32, out: &mut Vec<u32>) {
        out.push(src);
        let mut cur = torus_coords(dims, src);
        let target = torus_coords(dims, dst);
        while let Some((link, next)) = self.torus_step(dims, cur, target) {
            out.push(link);
            cur = next;
        }
        out.push(self.ejection(dst));
    }

    /// The next dimension-order hop from router `cur` towards router `target` (None when
    /// there).
    fn torus_step(
        &self,
        dims: [u32; 3],
        cur: [u32; 3],
        target: [u32; 3],
    ) -> Option<(u32, [u32; 3])> {
        let d = (0..3).find(|&d| cur[d] != target[d])?;
        let size = dims[d];
        // Modular steps by comparison (no division: this runs for every hop of every
        // reservation walk of segment switching).
        let fwd = if target[d] >= cur[d] {
            target[d] - cur[d]
        } else {
            target[d] + size - cur[d]
        };
        let plus = fwd <= size - fwd;
        let next = match (plus, cur[d]) {
            (true, c) if c + 1 == size => 0,
            (true, c) => c + 1,
            (false, 0) => size - 1,
            (false, c) => c - 1,
        };
        let node = torus_index(dims, cur);
        let link = if self.half {
            // The cable between a node and its + neighbour belongs to the node.
            let owner = if plus {
                node
            } else {
                torus_index(dims, with(cur, d, next))
            };
            self.endpoints + owner * 3 + d as u32
        } else {
            2 * self.endpoints + node * 6 + 2 * d as u32 + u32::from(!plus)
        };
        Some((link, with(cur, d, next)))
    }

    /// The link from an endpoint's switch down to it (its injection link when half duplex).
    fn ejection(&self, dst: u32) -> u32 {
        match self.topology {
            Shape::Crossbar { endpoints } if !self.half => endpoints + dst,
            Shape::FatTree { .. } => self.down_base() + dst,
            Shape::Torus3d { .. } if !self.half => self.endpoints + dst,
            _ => dst,
        }
    }

    pub fn shape(&self) -> Shape {
        self.topology
    }

    /// Fat tree: the level (1..=n) of switch `s` of the hop walk (`HopGraph`).
    pub fn switch_level(&self, s: u32) -> u32 {
        match self.topology {
            Shape::FatTree { n, .. } => s / self.pow[n as usize - 1] + 1,
            _ => 1,
        }
    }

    /// 3-D torus: the coordinates of router `s`.
    pub fn switch_coords(&self, s: u32) -> [u32; 3] {
        match self.topology {
            Shape::Torus3d { x, y, z } => torus_coords([x, y, z], s),
            _ => [s, 0, 0],
        }
    }
}

/// Hop-by-hop walk over the same link numbering: torus routers are the switches (one per
/// endpoint); fat-tree switch (j, index s) is number (j-1)*k^(n-1) + s; the crossbar is
/// switch 0. Fat-tree up-ports are offered d-mod-k first, then the others in port order.
impl HopGraph for Graph {
    fn endpoints(&self) -> u32 {
        self.endpoints
    }

    fn switches(&self) -> u32 {
        match self.topology {
            Shape::Crossbar { .. } => 1,
            Shape::FatTree { n, .. } => n * self.pow[n as usize - 1],
            Shape::Torus3d { .. } => self.endpoints,
        }
    }

    fn links(&self) -> u32 {
        self.links
    }

    fn hops(&self, src: u32, dst: u32) -> u32 {
        Graph::hops(self, src, dst)
    }

    fn hop_options(&self, at: At, dst: u32, out: &mut Vec<(u32, At)>) {
        out.clear();
        let s = match at {
            At::Endpoint(e) if e == dst => return,
            At::Endpoint(e) => {
                let first = match self.topology {
                    Shape::Crossbar { .. } => 0,
                    Shape::FatTree { k, .. } => e / k,
                    Shape::Torus3d { .. } => e,
                };
                out.push((e, At::Switch(first)));
                return;
            }
            At::Switch(s) => s,
        };
        match self.topology {
            Shape::Crossbar { .. } => out.push((self.ejection(dst), At::Endpoint(dst))),
            Shape::Torus3d { x, y, z } => {
                let dims = [x, y, z];
                let target = torus_coords(dims, dst);
                match self.torus_step(dims, torus_coords(dims, s), target) {
                    Some((link, next)) => out.push((link, At::Switch(torus_index(dims, next)))),
                    None => out.push((self.ejection(dst), At::Endpoint(dst))),
                }
            }
            Shape::FatTree { k, n } => {
                let p = &self.pow;
                let per_level = p[n as usize - 1];
                let (j, x) = (s / per_level + 1, s % per_level);
                let (g, c) = (x / p[j as usize - 1], x % p[j as usize - 1]);
                if dst / p[j as usize] == g {
                    // Down towards dst: the child's up-port that reaches this switch.
                    if j == 1 {
                        out.push((self.ejection(dst), At::Endpoint(dst)));
                        return;
                    }
                    let below = p[j as usize - 2];
                    let child = (dst / p[j as usize - 1]) * below + c % below;
                    let link = self.down_base() + self.up_link(j - 1, child, c / below);
                    out.push((link, At::Switch((j - 2) * per_level + child)));
                    return;
                }
                let first = (dst / p[j as usize - 1]) % k;
                for i in 0..k {
                    let u = (first + i) % k;
                    let up = (g / k) * p[j as usize] + c + u * p[j as usize - 1];
                    out.push((self.up_link(j, x, u), At::Switch(j * per_level + up)));
                }
            }
        }
    }

    /// The torus walk steps through router coordinates (no division per hop): it is the
    /// inner loop of segment switching's reservation walks.
    fn walk_free(
        &self,
        at: At,
        dst: u32,
        free: impl Fn(u32) -> bool,
        opts: &mut Vec<(u32, At)>,
        walk: &mut Vec<(u32, At)>,
    ) -> Option<u32> {
        let Shape::Torus3d { x, y, z } = self.topology else {
            return walk_by_options(self, at, dst, free, opts, walk);
        };
        let dims = [x, y, z];
        let mut step = |link: u32, next: At| {
            let ok = free(link);
            if ok {
                walk.push((link, next));
            }
            ok
        };
        let router = match at {
            At::Endpoint(e) if e == dst => return None,
            // An endpoint's injection link (its id) leads to its router (the same index).
            At::Endpoint(e) => {
                if !step(e, At::Switch(e)) {
                    return Some(e);
                }
                e
            }
            At::Switch(s) => s,
        };
        let target = torus_coords(dims, dst);
        let mut cur = torus_coords(dims, router);
        while let Some((link, next)) = self.torus_step(dims, cur, target) {
            if !step(link, At::Switch(torus_index(dims, next))) {
                return Some(link);
            }
            cur = next;
        }
        let link = self.ejection(dst);
        (!step(link, At::Endpoint(dst))).then_some(link)
    }

    fn home_switch(&self, endpoint: u32) -> Option<u32> {
        matches!(self.topology, Shape::Torus3d { .. }).then_some(endpoint)
    }

    fn is_endpoint_link(&self, link: u32) -> bool {
        let e = self.endpoints;
        match self.topology {
            Shape::Crossbar { .. } => true,
            Shape::FatTree { .. } => {
                link < e || (link >= self.down_base() && link - self.down_base() < e)
            }
            Shape::Torus3d { .. } => link < if self.half { e } else { 2 * e },
        }
    }
}

fn torus_coords(dims: [u32; 3], v: u32) -> [u32; 3] {
    // Two divisions (a remainder from its quotient), not three.
    let row = v / dims[0];
    let z = row / dims[1];
    [v - row * dims[0], row - z * dims[1], z]
}

fn torus_index(dims: [u32; 3], c: [u32; 3]) -> u32 {
    c[0] + dims[0] * (c[1] + dims[1] * c[2])
}

impl Topology for Graph {
    fn endpoints(&self) -> u32 {
        self.endpoints
    }

    fn link_classes(&self) -> &LinkClasses {
        &self.classes
    }

    fn route(
        &mut self,
        src: u32,
        dst: u32,
        _load: &LinkLoad<'_>,
        rng: &mut SplitMix64,
        out: &mut Route,
    ) {
        self.links_between(src, dst, rng, &mut out.links);
        out.latency_ns = out.links.len() as f64 * self.hop_latency_ns;
        out.path = 0;
    }

    fn control_latency(&self, src: u32, dst: u32) -> f64 {
        self.hops(src, dst) as f64 * self.hop_latency_ns
    }

    fn local_rate(&self) -> f64 {
        self.link_rate
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.link_rate
    }
}

/// The packet engine on these graphs: the hop latency is each link's, no separate router
/// delay (as the flow model's route latency). Deadlock freedom: the crossbar and the
/// k-ary n-tree's up*/down* routes have no cyclic channel dependency (one class); the
/// torus rings do, broken by a dateline per dimension (Dally & Seitz 1987): class 0 until
/// the packet takes the ring's wrap-around link, class 1 from it on, back to 0 when the
/// dimension-order route turns to the next dimension.
impl PacketTopology for Graph {
    fn link_latency(&self, _link: u32) -> f64 {
        self.hop_latency_ns
    }

    fn router_delay(&self) -> f64 {
        0.0
    }

    fn max_hops(&self) -> usize {
        match self.topology {
            Shape::Crossbar { .. } => 2,
            Shape::FatTree { n, .. } => 2 * n as usize,
            Shape::Torus3d { x, y, z } => {
                2 + [x, y, z].iter().map(|&d| d as usize / 2).sum::<usize>()
            }
        }
    }

    fn vc_classes(&self) -> u8 {
        match self.topology {
            Shape::Torus3d { .. } => 2,
            _ => 1,
        }
    }

    fn packet_route(
        &mut self,
        src: u32,
        dst: u32,
        _load: &dyn Fn(u32) -> u64,
        rng: &mut SplitMix64,
        links: &mut Vec<u32>,
    ) -> u8 {
        self.links_between(src, dst, rng, links);
        0
    }

    fn hop_classes(&self, links: &[u32], out: &mut Vec<Hop>) {
        out.clear();
        let Shape::Torus3d { x, y, z } = self.topology else {
            out.extend(links.iter().map(|&link| Hop { link, class: 0 }));
            return;
        };
        debug_assert!(!self.half, "packet contention needs full duplex");
        let (dims, network) = ([x, y, z], 2 * self.endpoints);
        let (mut dim, mut class) = (usize::MAX, 0u8);
        for &link in links {
            if link >= network {
                // Full duplex: node * 6 + 2 * dimension + (1 when stepping −).
                let i = link - network;
                let (node, d, minus) = (i / 6, (i % 6 / 2) as usize, i % 2 == 1);
                if d != dim {
                    (dim, class) = (d, 0);
                }
                let at = torus_coords(dims, node)[d];
                if (minus && at == 0) || (!minus && at + 1 == dims[d]) {
                    class = 1;
                }
                out.push(Hop { link, class });
            } else {
                out.push(Hop { link, class: 0 });
            }
        }
    }
}

fn with(mut c: [u32; 3], d: usize, v: u32) -> [u32; 3] {
    c[d] = v;
    c
}

#[cfg(test)]
mod tests;
