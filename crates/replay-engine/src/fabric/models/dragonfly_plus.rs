//! Dragonfly+ (Shpiner et al., HiPINEB 2017) as a flow network: leaf and spine routers in
//! groups, complete bipartite leaf–spine links inside a group, spine–spine global links
//! between groups (wiring: `fabric/dragonfly/wiring.rs`), minimal / Valiant / progressive
//! and fully progressive adaptive routing (`fabric/dragonfly/routing.rs`), three link
//! classes (terminal, local, global) with a bandwidth and a cable latency each.
//!
//! Timing follows CODES' dragonfly-plus model (`router_packet_send`, `packet_send`): every
//! router crossed adds `router_delay_ns` and the serialization of a packet on the link it
//! leaves by; the host adds the serialization of the packet on its terminal link. A
//! message of n bytes is a flow: it drains at its max-min share, and its first packet
//! (min(n, packet_bytes)) pays store-and-forward on every link but the slowest, whose time
//! the drain already counts. A single packet at zero load thus takes exactly CODES'
//! Σ (router delay + packet / link bandwidth). CODES has no cable latency; the
//! `latency_ns` of a class adds one per link of it crossed.
//!
//! Seed 001's words: a *group* there is a leaf switch and its hosts, an *island* is a
//! Dragonfly+ group; `locality` reports them so (placement same_group / same_island /
//! different_islands).

use crate::fabric::dragonfly::routing::{Chooser, Routing};
use crate::fabric::dragonfly::wiring::{Shape, Wiring, CLASS_NAMES, GLOBAL, LOCAL, TERMINAL};
use crate::fabric::flow::network::{FlowNetwork, LinkClasses, LinkLoad, Route, Topology};
use crate::fabric::packet::params::{self as packet, PacketParams, Switching};
use crate::fabric::packet::topology::{Hop, PacketTopology};
use crate::fabric::packet::PacketNetwork;
use crate::fabric::registry::{Built, Model};
use crate::fabric::Fabric;
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::Locality;
use crate::prng::SplitMix64;

const COUNT: Type = Type::Int { min: 1, max: 1 << 16 };
const POSITIVE: Type = Type::Float {
    min: 1e-9,
    max: f64::INFINITY,
};
const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

const LINK_CLASS: &[Param] = &[
    Param {
        key: "bandwidth_gbps",
        ty: POSITIVE,
        default: DefaultValue::Required,
        doc: "rate of each direction of a link of this class",
    },
    Param {
        key: "latency_ns",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "cable latency of one link of this class (CODES has none)",
    },
];

pub const MODEL: Model = Model {
    name: "dragonfly_plus",
    doc: "Dragonfly+ leaf/spine groups (CODES dragonfly-plus counts and timing): max-min flows, minimal / Valiant / progressive adaptive routing",
    params: &[
        &[
            Param {
                key: "groups",
                ty: COUNT,
                default: DefaultValue::Required,
                doc: "Dragonfly+ groups (seed 001's islands; CODES num_groups)",
            },
            Param {
                key: "leaves_per_group",
                ty: COUNT,
                default: DefaultValue::Required,
                doc: "leaf routers per group (CODES num_router_leaf)",
            },
            Param {
                key: "spines_per_group",
                ty: COUNT,
                default: DefaultValue::Required,
                doc: "spine routers per group, each linked to every leaf (CODES num_router_spine)",
            },
            Param {
                key: "hosts_per_leaf",
                ty: COUNT,
                default: DefaultValue::Required,
                doc: "host ports per leaf (CODES num_cns_per_router; seed 001's group size)",
            },
            Param {
                key: "endpoints_per_group",
                ty: COUNT,
                default: DefaultValue::Absent,
                doc: "hosts present per group, filling its leaves in order (default: all ports)",
            },
            Param {
                key: "global_links_per_spine",
                ty: Type::Int { min: 0, max: 1 << 16 },
                default: DefaultValue::Required,
                doc: "global links of every spine (CODES num_global_connections)",
            },
            Param {
                key: "terminal",
                ty: Type::Table(LINK_CLASS),
                default: DefaultValue::Required,
                doc: "host ↔ leaf links (CODES cn_bandwidth)",
            },
            Param {
                key: "local",
                ty: Type::Table(LINK_CLASS),
                default: DefaultValue::Required,
                doc: "leaf ↔ spine links inside a group (CODES local_bandwidth)",
            },
            Param {
                key: "global",
                ty: Type::Table(LINK_CLASS),
                default: DefaultValue::Required,
                doc: "spine ↔ spine links between groups (CODES global_bandwidth)",
            },
            Param {
                key: "router_delay_ns",
                ty: NON_NEGATIVE,
                default: DefaultValue::Float(100.0),
                doc: "delay of every router crossed (CODES router_delay, default 100)",
            },
            Param {
                key: "packet_bytes",
                ty: Type::Int { min: 1, max: 1 << 30 },
                default: DefaultValue::Int(1024),
                doc: "packet stored and forwarded at every router (CODES chunk_size)",
            },
            Param {
                key: "routing",
                ty: Type::Choice(Routing::NAMES),
                default: DefaultValue::Str("adaptive"),
                doc: "minimal | valiant | adaptive (CODES prog-adaptive) | fully_adaptive (also re-decided at the intermediate spine)",
            },
            Param {
                key: "adaptive_threshold_flows",
                ty: Type::Int { min: 0, max: 1 << 20 },
                default: DefaultValue::Int(0),
                doc: "adaptive routing stays minimal while its link carries at most this many flows (under packet contention: this many packets' bytes buffered and queued) (CODES adaptive_threshold, default 0)",
            },
            Param {
                key: "shared_memory_bandwidth_gbps",
                ty: POSITIVE,
                default: DefaultValue::Float(100.0),
                doc: "rate of copies between ranks on one endpoint",
            },
            packet::CONTENTION,
            packet::TABLE_OF_BUFFERS,
        ],
    ],
    build,
};

fn build(c: &Config, seed: u64) -> Result<Built, ConfigError> {
    let leaves = c.u32("leaves_per_group");
    let hosts = c.u32("hosts_per_leaf");
    let shape = Shape {
        groups: c.u32("groups"),
        leaves,
        spines: c.u32("spines_per_group"),
        hosts_per_leaf: hosts,
        endpoints_per_group: if c.has("endpoints_per_group") {
            c.u32("endpoints_per_group")
        } else {
            leaves * hosts
        },
        globals_per_spine: c.u32("global_links_per_spine"),
    };
    let wiring = Wiring::new(shape).map_err(|message| ConfigError {
        key: "global_links_per_spine".into(),
        message,
    })?;
    let routing = Routing::parse(c.str("routing")).expect("declared choices");
    if routing.detours() && shape.groups < 3 {
        return Err(ConfigError {
            key: "routing".into(),
            message: format!(
                "{} routing needs an intermediate group: at least 3 groups",
                c.str("routing")
            ),
        });
    }
    let class = |key: &str| c.table(key);
    let rate = |key: &str| class(key).f64("bandwidth_gbps") / 8.0;
    let of_link = (0..wiring.links()).map(|l| wiring.class_of(l)).collect();
    let packet_bytes = c.i64("packet_bytes") as u64;
    let dfp = DragonflyPlus {
        classes: LinkClasses {
            names: CLASS_NAMES,
            of_link,
            capacity: vec![rate("terminal"), rate("local"), rate("global")],
            buckets: Vec::new(),
        },
        cable_latency: ["terminal", "local", "global"].map(|k| class(k).f64("latency_ns")),
        wiring,
        routing,
        threshold: c.u32("adaptive_threshold_flows") as usize,
        router_delay: c.f64("router_delay_ns"),
        packet_bytes,
        shared_memory_rate: c.f64("shared_memory_bandwidth_gbps") / 8.0,
        routes: [0; 2],
        ports: Vec::new(),
    };
    // CODES forwards whole chunks: store-and-forward of `packet_bytes` at every router.
    let chunk = u32::try_from(packet_bytes).expect("declared <= 2^30");
    let fabric: Box<dyn Fabric> =
        match PacketParams::with_format(c, chunk, Switching::StoreAndForward)? {
            Some(p) => Box::new(PacketNetwork::new(dfp, p, seed)?),
            None => Box::new(FlowNetwork::new(dfp, SplitMix64::new(seed))),
        };
    Ok(Built {
        fabric,
        handshake: true,
    })
}

/// Path classes reported per transfer.
const MINIMAL: u8 = 0;
const NON_MINIMAL: u8 = 1;

pub struct DragonflyPlus {
    wiring: Wiring,
    classes: LinkClasses,
    cable_latency: [f64; 3],
    routing: Routing,
    threshold: usize,
    router_delay: f64,
    packet_bytes: u64,
    shared_memory_rate: f64,
    /// Routes picked per path class (data transfers; control messages take no route).
    routes: [u64; 2],
    /// The route choice's scratch (see `Chooser::ports`).
    ports: Vec<u32>,
}

impl DragonflyPlus {
    /// Routers crossed and cable latencies of a link list from host to host.
    fn fixed_latency(&self, links: &[u32]) -> f64 {
        let cables: f64 = links
            .iter()
            .map(|&l| self.cable_latency[self.wiring.class_of(l) as usize])
            .sum();
        cables + (links.len() - 1) as f64 * self.router_delay
    }
}

impl Topology for DragonflyPlus {
    fn endpoints(&self) -> u32 {
        self.wiring.endpoints()
    }

    fn link_classes(&self) -> &LinkClasses {
        &self.classes
    }

    fn route(
        &mut self,
        src: u32,
        dst: u32,
        load: &LinkLoad<'_>,
        rng: &mut SplitMix64,
        out: &mut Route,
    ) {
        let w = &self.wiring;
        out.links.clear();
        out.links.push(w.terminal_up(src));
        let flows = |l: u32| load.flows(l);
        let detour = Chooser {
            wiring: w,
            flows: &flows,
            rng,
            routing: self.routing,
            threshold: self.threshold,
            ports: &mut self.ports,
        }
        .route(src, dst, &mut out.links);
        out.links.push(w.terminal_down(dst));
        out.path = if detour { NON_MINIMAL } else { MINIMAL };
        out.latency_ns = self.fixed_latency(&out.links);
        self.routes[out.path as usize] += 1;
    }

    fn transfer_latency(&self, route: &Route, bytes: u64) -> f64 {
        let packet = bytes.min(self.packet_bytes) as f64;
        if packet == 0.0 {
            return route.latency_ns;
        }
        let cap = &self.classes.capacity;
        let (sum, slowest) = route.links.iter().fold((0.0, 0.0f64), |(s, m), &l| {
            let t = 1.0 / cap[self.wiring.class_of(l) as usize];
            (s + t, m.max(t))
        });
        route.latency_ns + packet * (sum - slowest)
    }

    fn control_latency(&self, src: u32, dst: u32) -> f64 {
        let w = &self.wiring;
        let (t, l, g) = (
            self.cable_latency[TERMINAL as usize],
            self.cable_latency[LOCAL as usize],
            self.cable_latency[GLOBAL as usize],
        );
        let d = self.router_delay;
        if w.group_of(src) != w.group_of(dst) {
            2.0 * t + 2.0 * l + g + 4.0 * d
        } else if w.leaf_of(src) != w.leaf_of(dst) {
            2.0 * t + 2.0 * l + 3.0 * d
        } else {
            2.0 * t + d
        }
    }

    fn locality(&self, endpoint: u32) -> Option<Locality> {
        let w = &self.wiring;
        let island = w.group_of(endpoint);
        Some(Locality {
            group: island * w.shape.leaves + w.leaf_of(endpoint),
            island,
        })
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["minimal", "non_minimal"]
    }

    fn local_rate(&self) -> f64 {
        self.shared_memory_rate
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.classes.capacity[TERMINAL as usize]
    }

    fn stats(&self, out: &mut Vec<(String, f64)>) {
        let w = &self.wiring;
        out.push(("routes_minimal".into(), self.routes[0] as f64));
        out.push(("routes_non_minimal".into(), self.routes[1] as f64));
        out.push(("topology_routers".into(), f64::from(w.routers())));
        out.push(("topology_endpoints".into(), f64::from(w.endpoints())));
        out.push(("topology_global_cables".into(), f64::from(w.global_cables())));
        out.push((
            "topology_cables_per_group_pair".into(),
            f64::from(w.cables_per_group_pair()),
        ));
        out.push((
            "topology_minimal_paths_same_group".into(),
            f64::from(w.minimal_paths(0, 0)),
        ));
        if w.shape.groups > 1 {
            out.push((
                "topology_minimal_paths_other_group".into(),
                f64::from(w.minimal_paths(0, 1)),
            ));
        }
    }
}

/// The packet engine on a Dragonfly+: every packet is routed by the same `Chooser` as a
/// flow, when it reaches the head of its injection queue, scored as CODES'
/// dfp_score_connection (ALPHA/DELTA) does: the bytes a port's buffers hold plus the bytes
/// queued for it, the threshold `adaptive_threshold_flows` packets. Adaptive routings
/// decide again as the packet reaches the source spine and an intermediate group's spine
/// (CODES' dfp_prog_adaptive_routing runs at every router; the leaves' choices of a
/// least-loaded spine stay those taken at injection).
///
/// Deadlock freedom (CODES' two VCs, `dfp_upward_channel_flag`): class 0 until the packet
/// turns upward again in an intermediate group — its leaf → spine link there (Valiant) or
/// the intermediate spine's second global link (fully adaptive) — class 1 from that hop
/// on. Class 0 routes go up at most once and down after, class 1 routes only towards the
/// destination, so neither class has a cyclic channel dependency.
impl PacketTopology for DragonflyPlus {
    fn link_latency(&self, link: u32) -> f64 {
        self.cable_latency[self.wiring.class_of(link) as usize]
    }

    fn router_delay(&self) -> f64 {
        self.router_delay
    }

    /// Valiant: terminal, leaf → spine, global, spine → leaf, leaf → spine, global,
    /// spine → leaf, terminal.
    fn max_hops(&self) -> usize {
        8
    }

    fn vc_classes(&self) -> u8 {
        2
    }

    fn packet_route(
        &mut self,
        src: u32,
        dst: u32,
        load: &dyn Fn(u32) -> u64,
        rng: &mut SplitMix64,
        links: &mut Vec<u32>,
    ) -> u8 {
        let w = &self.wiring;
        links.clear();
        links.push(w.terminal_up(src));
        let bytes = |l: u32| load(l) as usize;
        let detour = Chooser {
            wiring: w,
            flows: &bytes,
            rng,
            routing: self.routing,
            threshold: self.threshold * self.packet_bytes as usize,
            ports: &mut self.ports,
        }
        .route(src, dst, links);
        links.push(w.terminal_down(dst));
        if detour {
            NON_MINIMAL
        } else {
            MINIMAL
        }
    }

    fn reroutes(&self) -> bool {
        matches!(self.routing, Routing::Adaptive | Routing::FullyAdaptive)
    }

    fn reroute(
        &mut self,
        src: u32,
        dst: u32,
        links: &mut Vec<u32>,
        taken: usize,
        load: &dyn Fn(u32) -> u64,
        rng: &mut SplitMix64,
    ) -> Option<u8> {
        let bytes = |l: u32| load(l) as usize;
        let detour = Chooser {
            wiring: &self.wiring,
            flows: &bytes,
            rng,
            routing: self.routing,
            threshold: self.threshold * self.packet_bytes as usize,
            ports: &mut self.ports,
        }
        .reroute(src, dst, links, taken)?;
        links.push(self.wiring.terminal_down(dst));
        Some(if detour { NON_MINIMAL } else { MINIMAL })
    }

    fn hop_classes(&self, links: &[u32], out: &mut Vec<Hop>) {
        out.clear();
        let w = &self.wiring;
        let (mut globals, mut class) = (0, 0u8);
        for &link in links {
            match w.class_of(link) {
                GLOBAL => {
                    globals += 1;
                    if globals > 1 {
                        class = 1;
                    }
                }
                LOCAL if globals > 0 && w.local_goes_up(link) => class = 1,
                _ => {}
            }
            out.push(Hop { link, class });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::registry::FabricSpec;
    use crate::fabric::schema::Value;
    use crate::fabric::{Delivery, Fabric, Kind, Transfer};

    /// GiB/s (CODES' unit) in Gbit/s.
    fn gib(x: f64) -> f64 {
        x * (1u64 << 30) as f64 * 8.0 / 1e9
    }

    fn class(gbps: f64) -> Value {
        Value::table([("bandwidth_gbps", Value::from(gbps))])
    }

    /// CODES' dfp-test.conf: 5 groups, 4 leaves + 4 spines, 4 hosts per leaf, 4 global
    /// links per spine, 8 / 5.25 / 1.5 GiB/s, chunk 1024 B, router delay 100 ns.
    fn dfp_test(routing: &str, groups: i64, globals: i64) -> FabricSpec {
        FabricSpec::from_pairs([
            ("model", Value::from("dragonfly_plus")),
            ("groups", Value::Int(groups)),
            ("leaves_per_group", Value::Int(4)),
            ("spines_per_group", Value::Int(4)),
            ("hosts_per_leaf", Value::Int(4)),
            ("global_links_per_spine", Value::Int(globals)),
            ("routing", Value::from(routing)),
            ("terminal", class(gib(8.0))),
            ("local", class(gib(5.25))),
            ("global", class(gib(1.5))),
        ])
        .unwrap()
    }

    fn stats(f: &dyn Fabric) -> std::collections::BTreeMap<String, f64> {
        let mut out = Vec::new();
        f.stats(1.0, &mut out);
        out.into_iter().collect()
    }

    fn deliver_one(f: &mut dyn Fabric, t: Transfer) -> Delivery {
        assert_eq!(f.submit(0.0, &t), crate::fabric::Submitted::Later);
        let mut out = Vec::new();
        while let Some(next) = f.next_time() {
            f.advance(next, &mut out);
        }
        assert_eq!(out.len(), 1);
        out[0]
    }

    #[test]
    fn counts_are_codes_dfp_test_and_dfp_8k() {
        let s = stats(dfp_test("adaptive", 5, 4).build(0).unwrap().fabric.as_ref());
        // dfp-test.conf: 5 repetitions x (16 terminals, 8 routers); dfp-test-inter holds 80
        // directed global links, 4 per ordered group pair.
        assert_eq!(s["topology_endpoints"], 80.0);
        assert_eq!(s["topology_routers"], 40.0);
        assert_eq!(s["topology_global_cables"], 40.0);
        assert_eq!(s["topology_cables_per_group_pair"], 4.0);
        assert_eq!(s["topology_minimal_paths_other_group"], 4.0);
        assert_eq!(s["topology_minimal_paths_same_group"], 4.0);
        let w = Wiring::new(Shape {
            groups: 33,
            leaves: 16,
            spines: 16,
            hosts_per_leaf: 16,
            endpoints_per_group: 256,
            globals_per_spine: 16,
        })
        .unwrap();
        // dfp_8k.conf: 1056 repetitions x (8 terminals, 1 router); dfp_8k_inter: 8448
        // directed links, 8 per ordered group pair, spine x reaching block x mod 2.
        assert_eq!((w.endpoints(), w.routers()), (8448, 1056));
        assert_eq!((w.global_cables(), w.cables_per_group_pair()), (4224, 8));
        assert_eq!(w.far_end(0, 0, 0), (1, 15));
        assert_eq!(w.far_end(0, 1, 0), (17, 14));
        assert_eq!(w.far_end(1, 1, 15), (0, 14));
    }

    #[test]
    fn zero_load_packet_latency_is_codes_sum_of_router_delay_and_serialization() {
        // One 1024-B chunk, per CODES router_packet_send: each router crossed costs
        // router_delay + chunk / bandwidth of the link it leaves by; the host adds
        // chunk / cn_bandwidth (packet_send).
        let ns = |gibs: f64| 1024.0 / (gibs * (1u64 << 30) as f64) * 1e9;
        let (t, l, g) = (ns(8.0), ns(5.25), ns(1.5));
        let cases = [
            // same leaf: host, leaf
            (0, 1, "minimal", 2, 0u8, t + 100.0 + t),
            // same group: host, leaf, spine, leaf
            (0, 5, "minimal", 4, 0, t + 3.0 * 100.0 + 2.0 * l + t),
            // other group, minimal: host, leaf, spine, spine, leaf
            (0, 16 * 3, "minimal", 5, 0, t + 4.0 * 100.0 + 2.0 * l + g + t),
            // other group through another: host, leaf, spine, spine, leaf, spine, spine, leaf
            (0, 16 * 3, "valiant", 8, 1, t + 7.0 * 100.0 + 4.0 * l + 2.0 * g + t),
        ];
        for (src, dst, routing, hops, path, expected) in cases {
            let mut f = dfp_test(routing, 5, 4).build(0).unwrap().fabric;
            let d = deliver_one(f.as_mut(), Transfer::new(0, src, dst, 1024, Kind::Eager));
            assert!((d.at - expected).abs() < 1e-6, "{routing} {src}->{dst}: {} vs {expected}", d.at);
            assert_eq!((d.info.hops, d.info.path), (hops, path));
        }
        // A 1 MiB message pipelines: (n / chunk - 1) more chunks at the slowest link.
        let mut f = dfp_test("minimal", 5, 4).build(0).unwrap().fabric;
        let d = deliver_one(f.as_mut(), Transfer::new(0, 0, 48, 1 << 20, Kind::Eager));
        let expected = t + 400.0 + 2.0 * l + g + t + 1023.0 * g;
        assert!((d.at - expected).abs() < 1e-3 * expected, "{} vs {expected}", d.at);
        let rts = Transfer::new(1, 0, 48, 1 << 20, Kind::Rts);
        assert_eq!(f.submit(10.0, &rts), crate::fabric::Submitted::At(410.0));
    }

    #[test]
    fn locality_is_leaf_and_group() {
        let f = dfp_test("minimal", 5, 4).build(0).unwrap().fabric;
        let loc = |e| f.locality(e).map(|l| (l.group, l.island));
        assert_eq!((loc(0), loc(4), loc(17)), (Some((0, 0)), Some((1, 0)), Some((4, 1))));
        assert_eq!(f.path_classes(), &["minimal", "non_minimal"]);
        assert!(dfp_test("valiant", 2, 4).build(0).is_err());
        assert!(dfp_test("minimal", 5, 3).build(0).is_err());
    }
}
