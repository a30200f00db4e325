//! The classic topologies of the flow model — crossbar, k-ary n-tree, 3-D torus — as
//! arithmetic link numberings (no adjacency lists): a route is the list of directed link ids
//! a transfer crosses. Half duplex maps both directions of a cable to one id, so they share
//! its bandwidth. All links are of one class (one capacity, one per-hop latency).

use super::flow_network::{LinkClasses, LinkLoad, Route, Topology};
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
            Shape::FatTree { n, .. } => {
                let p = &self.pow;
                let h = (1..=n)
                    .find(|&j| src / p[j as usize] == dst / p[j as usize])
                    .unwrap_or(n);
                2 * h
            }
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

    /// Appends the links from `src` to `dst` to `out` (nothing when src == dst).
    pub fn links_between(&self, src: u32, dst: u32, rng: &mut SplitMix64, out: &mut Vec<u32>) {
        out.clear();
        if src == dst {
            return;
        }
        match self.topology {
            Shape::Crossbar { endpoints } => {
                out.push(src);
                out.push(if self.half { dst } else { endpoints + dst });
            }
            Shape::FatTree { k, n } => self.fat_tree_route(k, n, src, dst, rng, out),
            Shape::Torus3d { x, y, z } => self.torus_route([x, y, z], src, dst, out),
        }
    }

    /// k-ary n-tree. Level-j switches (j = 1..n) are (group g = e / k^j, copy c < k^(j-1)),
    /// index g*k^(j-1) + c; switch (j, g, c) up-port u reaches (j+1, g/k, c + u*k^(j-1)).
    fn fat_tree_route(
        &self,
        k: u32,
        n: u32,
        src: u32,
        dst: u32,
        rng: &mut SplitMix64,
        out: &mut Vec<u32>,
    ) {
        let e = self.endpoints;
        let p = &self.pow;
        let down_base = if self.half { 0 } else { e + (n - 1) * e };
        let up_link = |j: u32, s: u32, u: u32| e + ((j - 1) * p[n as usize - 1] + s) * k + u;
        // Lowest level whose subtree holds both endpoints.
        let h = (1..=n)
            .find(|&j| src / p[j as usize] == dst / p[j as usize])
            .unwrap_or(n);
        out.push(src);
        let mut c = 0u32; // copy index at the current level
        for j in 1..h {
            let u = match self.routing {
                Routing::DModK => (dst / p[j as usize - 1]) % k,
                Routing::Random => rng.below(u64::from(k)) as u32,
            };
            let g = src / p[j as usize];
            out.push(up_link(j, g * p[j as usize - 1] + c, u));
            c += u * p[j as usize - 1];
        }
        // Down: the cable between (j+1, ·, c) and its child (j, g, c mod k^(j-1)) is the child's
        // up-port u = c / k^(j-1).
        for j in (1..h).rev() {
            let child_c = c % p[j as usize - 1];
            let u = c / p[j as usize - 1];
            let g = dst / p[j as usize];
            out.push(down_base + up_link(j, g * p[j as usize - 1] + child_c, u));
            c = child_c;
        }
        out.push(down_base + dst);
    }

    /// Dimension-order routing, shortest direction per dimension (ties go +).
    fn torus_route(&self, dims: [u32; 3], src: u32, dst: u32, out: &mut Vec<u32>) {
        let e = self.endpoints;
        let coords = |v: u32| {
            [
                v % dims[0],
                (v / dims[0]) % dims[1],
                v / (dims[0] * dims[1]),
            ]
        };
        let index = |c: [u32; 3]| c[0] + dims[0] * (c[1] + dims[1] * c[2]);
        let (ep_links, dir_links) = if self.half { (e, 3) } else { (2 * e, 6) };
        out.push(src);
        let mut cur = coords(src);
        let target = coords(dst);
        for d in 0..3 {
            let size = dims[d];
            let fwd = (target[d] + size - cur[d]) % size;
            let plus = fwd <= size - fwd;
            let steps = if plus { fwd } else { size - fwd };
            for _ in 0..steps {
                let node = index(cur);
                let next = if plus {
                    (cur[d] + 1) % size
                } else {
                    (cur[d] + size - 1) % size
                };
                let link = if self.half {
                    // The cable between a node and its + neighbour belongs to the node.
                    let owner = if plus {
                        node
                    } else {
                        index(with(cur, d, next))
                    };
                    ep_links + owner * dir_links + d as u32
                } else {
                    ep_links + node * dir_links + 2 * d as u32 + u32::from(!plus)
                };
                out.push(link);
                cur[d] = next;
            }
        }
        out.push(if self.half { dst } else { e + dst });
    }
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

fn with(mut c: [u32; 3], d: usize, v: u32) -> [u32; 3] {
    c[d] = v;
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_routes(g: &Graph) -> Vec<Vec<u32>> {
        let mut rng = SplitMix64::new(1);
        let mut routes = Vec::new();
        for s in 0..g.endpoints() {
            for d in 0..g.endpoints() {
                let mut r = Vec::new();
                g.links_between(s, d, &mut rng, &mut r);
                assert!(r.iter().all(|&l| l < g.links()), "{s}->{d}: {r:?}");
                let mut u = r.clone();
                u.sort_unstable();
                u.dedup();
                assert_eq!(u.len(), r.len(), "route revisits a link: {r:?}");
                assert_eq!(r.len() as u32, g.hops(s, d), "{s}->{d}");
                routes.push(r);
            }
        }
        routes
    }

    #[test]
    fn fat_tree_hops_and_link_use() {
        let g = Graph::new(
            Shape::FatTree { k: 4, n: 2 },
            Duplex::Full,
            Routing::DModK,
            1.0,
            10.0,
        )
        .unwrap();
        assert_eq!(g.endpoints(), 16);
        let mut rng = SplitMix64::new(0);
        let mut r = Vec::new();
        g.links_between(0, 1, &mut rng, &mut r);
        assert_eq!(r.len(), 2); // same leaf switch
        g.links_between(0, 15, &mut rng, &mut r);
        assert_eq!(r.len(), 4); // via a spine
        let routes = all_routes(&g);
        // d-mod-k on a full-bisection tree: a shift permutation uses every up-link once.
        let mut used = std::collections::HashSet::new();
        for s in 0..16u32 {
            for &l in &routes[(s * 16 + (s + 4) % 16) as usize] {
                assert!(
                    used.insert(l),
                    "link {l} used twice by the shift permutation"
                );
            }
        }
    }

    #[test]
    fn torus_routes_are_shortest() {
        let g = Graph::new(
            Shape::Torus3d { x: 4, y: 4, z: 4 },
            Duplex::Full,
            Routing::DModK,
            1.0,
            10.0,
        )
        .unwrap();
        let routes = all_routes(&g);
        let dist = |a: u32, b: u32| a.abs_diff(b).min(4 - a.abs_diff(b));
        for s in 0..64u32 {
            for d in 0..64u32 {
                if s == d {
                    continue;
                }
                let hops = dist(s % 4, d % 4) + dist(s / 4 % 4, d / 4 % 4) + dist(s / 16, d / 16);
                assert_eq!(routes[(s * 64 + d) as usize].len() as u32, hops + 2);
            }
        }
        let h = Graph::new(
            Shape::Torus3d { x: 3, y: 2, z: 1 },
            Duplex::Half,
            Routing::DModK,
            1.0,
            10.0,
        )
        .unwrap();
        all_routes(&h);
    }

    #[test]
    fn half_duplex_crossbar_shares_a_cable_both_ways() {
        let g = Graph::new(
            Shape::Crossbar { endpoints: 4 },
            Duplex::Half,
            Routing::DModK,
            1.0,
            10.0,
        )
        .unwrap();
        let mut rng = SplitMix64::new(0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        g.links_between(0, 1, &mut rng, &mut a);
        g.links_between(1, 0, &mut rng, &mut b);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
