//! Tests of the topology graphs: route shapes, link use, and the hop-by-hop walk.

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

/// Following the first hop option at every step walks exactly the d-mod-k route.
fn walk(g: &Graph, src: u32, dst: u32) -> Vec<u32> {
    let mut at = At::Endpoint(src);
    let mut links = Vec::new();
    let mut opts = Vec::new();
    loop {
        g.hop_options(at, dst, &mut opts);
        let Some(&(link, next)) = opts.first() else {
            return links;
        };
        assert!(opts.iter().all(|o| o.0 < g.links()));
        links.push(link);
        at = next;
        assert!(links.len() <= 64, "walk {src}->{dst} does not end");
    }
}

#[test]
fn the_hop_walk_follows_the_routes_and_offers_every_up_port() {
    let shapes = [
        Shape::FatTree { k: 3, n: 3 },
        Shape::Torus3d { x: 4, y: 3, z: 2 },
        Shape::Crossbar { endpoints: 5 },
    ];
    for shape in shapes {
        for duplex in [Duplex::Full, Duplex::Half] {
            let g = Graph::new(shape, duplex, Routing::DModK, 1.0, 1.0).unwrap();
            let mut rng = SplitMix64::new(0);
            let mut route = Vec::new();
            for s in 0..g.endpoints() {
                for d in 0..g.endpoints() {
                    if s == d {
                        continue;
                    }
                    g.links_between(s, d, &mut rng, &mut route);
                    assert_eq!(walk(&g, s, d), route, "{shape:?} {duplex:?} {s}->{d}");
                    assert!(g.is_endpoint_link(route[0]));
                    assert!(g.is_endpoint_link(*route.last().unwrap()));
                    let inner = &route[1..route.len() - 1];
                    assert!(inner.iter().all(|&l| !g.is_endpoint_link(l)), "{route:?}");
                }
            }
        }
    }
    // A fat-tree leaf switch offers all k up-ports towards a remote endpoint, each leading
    // to a distinct level-2 switch; switch numbers carry their level.
    let g = Graph::new(
        Shape::FatTree { k: 3, n: 3 },
        Duplex::Full,
        Routing::DModK,
        1.0,
        1.0,
    )
    .unwrap();
    assert_eq!(HopGraph::switches(&g), 27);
    let mut opts = Vec::new();
    g.hop_options(At::Switch(0), 26, &mut opts);
    assert_eq!(opts.len(), 3);
    let mut next: Vec<u32> = opts
        .iter()
        .map(|o| match o.1 {
            At::Switch(s) => s,
            At::Endpoint(_) => panic!("leaf goes up"),
        })
        .collect();
    next.sort_unstable();
    next.dedup();
    assert_eq!(next.len(), 3);
    assert!(next.iter().all(|&s| g.switch_level(s) == 2));
    let t = Graph::new(
        Shape::Torus3d { x: 4, y: 3, z: 2 },
        Duplex::Full,
        Routing::DModK,
        1.0,
        1.0,
    )
    .unwrap();
    assert_eq!(t.switch_coords(4 + 4 * 3 + 1), [1, 1, 1]);
    assert_eq!(t.home_switch(5), Some(5));
}
