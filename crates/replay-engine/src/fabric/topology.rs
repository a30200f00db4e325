//! Topology graphs of the flow model as arithmetic link numberings (no adjacency lists):
//! a route is the list of directed link ids a transfer crosses. Half duplex maps both
//! directions of a cable to one id, so they share its bandwidth.

use crate::config::{Duplex, Routing, Topology};
use crate::prng::SplitMix64;

#[derive(Debug, Clone)]
pub struct Graph {
    topology: Topology,
    endpoints: u32,
    links: u32,
    half: bool,
    routing: Routing,
    /// Fat tree: k^j for j = 0..=n.
    pow: Vec<u32>,
}

impl Graph {
    pub fn new(topology: Topology, duplex: Duplex, routing: Routing) -> Result<Self, String> {
        let half = duplex == Duplex::Half;
        let dirs = if half { 1 } else { 2 };
        let (endpoints, links, pow) = match topology {
            Topology::Crossbar { endpoints } => {
                if endpoints == 0 {
                    return Err("crossbar needs endpoints >= 1".into());
                }
                (endpoints, u64::from(endpoints) * dirs, Vec::new())
            }
            Topology::FatTree { k, n } => {
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
            Topology::Torus3d { x, y, z } => {
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
        Ok(Self {
            topology,
            endpoints,
            links,
            half,
            routing,
            pow,
        })
    }

    pub fn endpoints(&self) -> u32 {
        self.endpoints
    }

    pub fn links(&self) -> u32 {
        self.links
    }

    /// Appends the links from `src` to `dst` to `out` (nothing when src == dst).
    pub fn route(&self, src: u32, dst: u32, rng: &mut SplitMix64, out: &mut Vec<u32>) {
        out.clear();
        if src == dst {
            return;
        }
        match self.topology {
            Topology::Crossbar { endpoints } => {
                out.push(src);
                out.push(if self.half { dst } else { endpoints + dst });
            }
            Topology::FatTree { k, n } => self.fat_tree_route(k, n, src, dst, rng, out),
            Topology::Torus3d { x, y, z } => self.torus_route([x, y, z], src, dst, out),
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
                g.route(s, d, &mut rng, &mut r);
                assert!(r.iter().all(|&l| l < g.links()), "{s}->{d}: {r:?}");
                let mut u = r.clone();
                u.sort_unstable();
                u.dedup();
                assert_eq!(u.len(), r.len(), "route revisits a link: {r:?}");
                routes.push(r);
            }
        }
        routes
    }

    #[test]
    fn fat_tree_hops_and_link_use() {
        let g = Graph::new(
            Topology::FatTree { k: 4, n: 2 },
            Duplex::Full,
            Routing::DModK,
        )
        .unwrap();
        assert_eq!(g.endpoints(), 16);
        let mut rng = SplitMix64::new(0);
        let mut r = Vec::new();
        g.route(0, 1, &mut rng, &mut r);
        assert_eq!(r.len(), 2); // same leaf switch
        g.route(0, 15, &mut rng, &mut r);
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
            Topology::Torus3d { x: 4, y: 4, z: 4 },
            Duplex::Full,
            Routing::DModK,
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
            Topology::Torus3d { x: 3, y: 2, z: 1 },
            Duplex::Half,
            Routing::DModK,
        )
        .unwrap();
        all_routes(&h);
    }

    #[test]
    fn half_duplex_crossbar_shares_a_cable_both_ways() {
        let g = Graph::new(
            Topology::Crossbar { endpoints: 4 },
            Duplex::Half,
            Routing::DModK,
        )
        .unwrap();
        let mut rng = SplitMix64::new(0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        g.route(0, 1, &mut rng, &mut a);
        g.route(1, 0, &mut rng, &mut b);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
