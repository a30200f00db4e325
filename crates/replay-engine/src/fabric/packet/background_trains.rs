//! The background's demands as trains per link, for the hybrid mode's virtual queues
//! (virtual_queues.rs): every demand is routed `ROUTE_SAMPLES` times as an idle network
//! would (the topology's own routing at zero load: the background's mean load says nothing
//! of which queue is short at an instant), what each route carries is capped by max-min
//! sharing with the demand as its ceiling (an overloaded link carries its capacity, as
//! back-pressure throttles the explicit mode's sources), and each link gets the demand's
//! messages as trains of the share of the demand's carried bytes that crossed it.

use std::collections::hash_map::Entry;

use fast_hash::FastMap;

use super::topology::{spread_classes, PacketTopology};
use super::virtual_queues::TrainFlow;
use crate::fabric::flow::maxmin::{FlowSlot, MaxMin};
use crate::fabric::Demand;
use crate::prng::SplitMix64;

/// Routes sampled per background demand (the idle network's random choices among equal
/// paths, e.g. a Dragonfly+ leaf's spines): its load splits over them in these shares.
/// (8, not 16: sampling dominates the hybrid's setup, a fixed cost per replay.)
const ROUTE_SAMPLES: u32 = 8;

/// Per link (of `rates`, bytes per ns), the trains the `demands` send through it; `spread`
/// VCs per deadlock-freedom class (the engine's rule, topology.rs `spread_classes`).
pub fn trains<T: PacketTopology>(
    topology: &mut T,
    rng: &mut SplitMix64,
    rates: &[f64],
    spread: u32,
    demands: &[Demand],
) -> Vec<Vec<TrainFlow>> {
    let mut links = Vec::new();
    let mut hops = Vec::new();
    let nlinks = rates.len();
    // One max-min flow per (demand, distinct sampled route), behind a private link
    // whose capacity is that route's share of the demand.
    let mut capacity = rates.to_vec();
    // (demand, route, each hop's VC)
    let mut routes: Vec<(usize, Vec<u32>, Vec<u8>)> = Vec::new();
    let idle = |_: u32| 0;
    let live: Vec<&Demand> = demands
        .iter()
        .filter(|d| d.src != d.dst && d.bytes_per_ns > 0.0)
        .collect();
    for (i, d) in live.iter().enumerate() {
        let first = routes.len();
        for _ in 0..ROUTE_SAMPLES {
            topology.packet_route(d.src, d.dst, &idle, rng, &mut links);
            let share = d.bytes_per_ns / f64::from(ROUTE_SAMPLES);
            match routes[first..].iter().position(|(_, r, _)| *r == links) {
                Some(j) => capacity[nlinks + first + j] += share,
                None => {
                    topology.hop_classes(&links, &mut hops);
                    spread_classes(&mut hops, spread, d.dst);
                    let vcs = hops.iter().map(|h| h.class).collect();
                    routes.push((i, links.clone(), vcs));
                    capacity.push(share);
                }
            }
        }
    }
    let mut solver = MaxMin::new(capacity);
    let mut path = Vec::new();
    for (j, (_, links, _)) in routes.iter().enumerate() {
        path.clear();
        path.extend_from_slice(links);
        path.push((nlinks + j) as u32);
        solver.add(0.0, &path, f64::MAX, j as u32);
    }
    solver.settle(0.0);
    // Per demand, the bytes per ns it carries in all.
    let mut carried = vec![0.0; live.len()];
    for (j, (i, _, _)) in routes.iter().enumerate() {
        carried[*i] += solver.rate(j as FlowSlot);
    }
    // A demand's messages cross a link as trains, each entering from the input its
    // route came by: per (link, input, VC) the share of the demand's carried bytes.
    let mut flows: Vec<Vec<TrainFlow>> = vec![Vec::new(); nlinks];
    let mut through: Vec<(u32, u32, u8, f64)> = Vec::new();
    let mut kinds: FastMap<(u32, u32, u8, u32, u64), usize> = FastMap::default();
    let mut j = 0;
    for (i, d) in live.iter().enumerate() {
        through.clear();
        while j < routes.len() && routes[j].0 == i {
            let (_, links, vcs) = &routes[j];
            let rate = solver.rate(j as FlowSlot);
            for (k, &l) in links.iter().enumerate() {
                let from = if k == 0 {
                    nlinks as u32 + d.src
                } else {
                    links[k - 1]
                };
                let vc = if k == 0 { 0 } else { vcs[k - 1] };
                match through
                    .iter_mut()
                    .find(|x| (x.0, x.1, x.2) == (l, from, vc))
                {
                    Some(x) => x.3 += rate,
                    None => through.push((l, from, vc, rate)),
                }
            }
            j += 1;
        }
        if carried[i] <= 0.0 {
            continue;
        }
        let per_ns = carried[i] / d.message_bytes as f64;
        let eject = *routes[j - 1].1.last().expect("a route crosses a link");
        let source_rate = topology.injection_rate(d.src);
        for &(l, from, vc, rate) in &through {
            let bytes = d.message_bytes as f64 * rate / carried[i];
            let port = &mut flows[l as usize];
            let kind = TrainFlow {
                bytes,
                per_ns,
                from,
                vc,
                eject,
                source_rate,
            };
            match kinds.entry((l, from, vc, eject, bytes.to_bits())) {
                Entry::Occupied(at) => port[*at.get()].per_ns += per_ns,
                Entry::Vacant(at) => {
                    at.insert(port.len());
                    port.push(kind);
                }
            }
        }
    }
    flows
}
