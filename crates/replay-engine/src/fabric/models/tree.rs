//! A switch hierarchy with one link class per level: endpoints hang off group switches,
//! group switches off island switches, and so on up to one top switch (e.g. a lab of
//! 2 islands × 2 groups × 4 nodes with 1 Gbit/s node links, 200 Mbit/s group uplinks and
//! 100 Mbit/s island uplinks). One path between any two endpoints: up to their lowest
//! common switch, then down. Level 1's subtrees are the groups, level 2's the islands
//! (placement by locality class).

use crate::fabric::flow::maxmin::TokenBucket;
use crate::fabric::flow::network::{FlowNetwork, LinkClasses, LinkLoad, Route, Topology};
use crate::fabric::packet::params::{self as packet, PacketParams};
use crate::fabric::packet::topology::PacketTopology;
use crate::fabric::packet::PacketNetwork;
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::Locality;
use crate::prng::SplitMix64;

const LEVEL: &[Param] = &[
    Param {
        key: "arity",
        ty: Type::Int { min: 1, max: 1 << 16 },
        default: DefaultValue::Required,
        doc: "children per switch of this level (endpoints for level 1)",
    },
    Param {
        key: "link_bandwidth_gbps",
        ty: Type::Float {
            min: 1e-9,
            max: f64::INFINITY,
        },
        default: DefaultValue::Required,
        doc: "rate of each direction of the links from the children up to this level",
    },
    Param {
        key: "link_latency_ns",
        ty: Type::Float {
            min: 0.0,
            max: f64::INFINITY,
        },
        default: DefaultValue::Float(0.0),
        doc: "latency of one of those links",
    },
    Param {
        key: "burst_bytes",
        ty: Type::Int {
            min: 0,
            max: 1 << 40,
        },
        default: DefaultValue::Absent,
        doc: "token bucket of the links' shaper (tc's burst): after an idle period this many bytes, plus the packet that starts while tokens are >= 0 (as htb does: under contention = \"flow\" the most any message on the link has left, at most max_packet_bytes), leave at peak_bandwidth_gbps, then link_bandwidth_gbps holds; absent: a constant-rate link",
    },
    Param {
        key: "peak_bandwidth_gbps",
        ty: Type::Float {
            min: 1e-9,
            max: f64::INFINITY,
        },
        default: DefaultValue::Absent,
        doc: "rate of the links while their bucket holds tokens (the device behind the shaper); given with burst_bytes, above link_bandwidth_gbps",
    },
    Param {
        key: "max_packet_bytes",
        ty: Type::Int {
            min: 0,
            max: 1 << 40,
        },
        default: DefaultValue::Int(0),
        doc: "largest packet the shaper charges at once: Linux htb sends while its tokens are >= 0 and charges the whole packet (a GSO super-packet, up to the device's gso_max_size; a smaller message is its own), so after idle up to burst_bytes plus this pass at peak (flow contention only: the packet engine's packets are [packet] packet_bytes)",
    },
];

pub const MODEL: Model = Model {
    name: "tree",
    doc: "max-min fair flows on a switch hierarchy with a rate and latency per level (groups and islands as its subtrees)",
    params: &[
        &[
            Param {
                key: "levels",
                ty: Type::TableList(LEVEL),
                default: DefaultValue::Required,
                doc: "[[levels]] from the endpoints up: level 1 = group switches, level 2 = island switches, …",
            },
            Param {
                key: "switch_latency_ns",
                ty: Type::Float {
                    min: 0.0,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(0.0),
                doc: "forwarding delay of every switch crossed",
            },
            Param {
                key: "local_bandwidth_gbps",
                ty: Type::Float {
                    min: 1e-9,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(100.0),
                doc: "rate of copies between ranks on one endpoint (shared memory)",
            },
            packet::CONTENTION,
            packet::TABLE,
        ],
    ],
    build,
};

fn build(c: &Config, seed: u64) -> Result<Built, ConfigError> {
    let levels = c.tables("levels");
    if levels.is_empty() {
        return Err(ConfigError {
            key: "levels".into(),
            message: "needs at least one [[levels]] table".into(),
        });
    }
    let arity: Vec<u32> = levels.iter().map(|l| l.u32("arity")).collect();
    let endpoints = arity
        .iter()
        .try_fold(1u64, |acc, &a| acc.checked_mul(u64::from(a)).filter(|&n| n <= 1 << 24))
        .ok_or_else(|| ConfigError {
            key: "levels".into(),
            message: "more than 2^24 endpoints".into(),
        })? as u32;
    let packet = PacketParams::of(c)?;
    let buckets = levels
        .iter()
        .enumerate()
        .map(|(i, l)| bucket_of(l, i, packet.is_some()))
        .collect::<Result<Vec<_>, _>>()?;
    let tree = Tree::new(
        arity,
        levels.iter().map(|l| l.f64("link_bandwidth_gbps") / 8.0).collect(),
        buckets,
        levels.iter().map(|l| l.f64("link_latency_ns")).collect(),
        c.f64("switch_latency_ns"),
        c.f64("local_bandwidth_gbps") / 8.0,
        endpoints,
    );
    let fabric: Box<dyn crate::fabric::Fabric> = match packet {
        Some(p) => Box::new(PacketNetwork::new(tree, p, seed)?),
        None => Box::new(FlowNetwork::new(tree, SplitMix64::new(seed))),
    };
    Ok(Built {
        fabric,
        handshake: true,
    })
}

/// The token bucket of level `i` (0-based), if its table declares one. Under packet
/// contention (`packets`) `max_packet_bytes`, the flow engine's cap on the packet that
/// overdraws the bucket, is refused: the packet engine charges its own packets
/// (packet/shaper.rs).
fn bucket_of(level: &Config, i: usize, packets: bool) -> Result<Option<TokenBucket>, ConfigError> {
    let err = |key: &str, message: String| ConfigError {
        key: format!("levels[{i}].{key}"),
        message,
    };
    if packets && level.i64("max_packet_bytes") > 0 {
        return Err(err(
            "max_packet_bytes",
            "is for contention = \"flow\": the packet engine's shapers charge its own packets ([packet] packet_bytes); drop it".into(),
        ));
    }
    match (level.has("burst_bytes"), level.has("peak_bandwidth_gbps")) {
        (false, false) if level.i64("max_packet_bytes") > 0 => Err(err(
            "max_packet_bytes",
            "needs burst_bytes and peak_bandwidth_gbps (it widens their bucket)".into(),
        )),
        (false, false) => Ok(None),
        (true, false) => Err(err(
            "peak_bandwidth_gbps",
            "is required with burst_bytes (the rate the bucket releases at)".into(),
        )),
        (false, true) => Err(err(
            "burst_bytes",
            "is required with peak_bandwidth_gbps (the bucket's depth)".into(),
        )),
        (true, true) => {
            let (peak, rate) = (level.f64("peak_bandwidth_gbps"), level.f64("link_bandwidth_gbps"));
            if peak <= rate {
                return Err(err(
                    "peak_bandwidth_gbps",
                    format!("must exceed link_bandwidth_gbps ({rate}); got {peak}"),
                ));
            }
            let (depth, packet) = (
                level.i64("burst_bytes") as f64,
                level.i64("max_packet_bytes") as f64,
            );
            // (A packet shaper with no burst still sends each packet at the peak once
            // its debt is repaid.)
            if depth + packet <= 0.0 && !packets {
                return Err(err(
                    "burst_bytes",
                    "a bucket of 0 bytes (with max_packet_bytes 0) never releases at the peak".into(),
                ));
            }
            Ok(Some(TokenBucket {
                depth_bytes: depth,
                packet_bytes: packet,
                peak: peak / 8.0,
            }))
        }
    }
}

const LEVEL_NAMES: [&str; 8] = [
    "level1", "level2", "level3", "level4", "level5", "level6", "level7", "level8",
];

/// Link numbering: level l (0-based) has `count[l]` children (endpoints at l = 0, switches
/// of level l above), each with an up link (`base[l] + 2c`) and a down link (`+ 1`).
pub struct Tree {
    arity: Vec<u32>,
    /// Endpoints under one switch of level l + 1 (span[0] = arity[0]).
    span: Vec<u32>,
    base: Vec<u32>,
    latency: Vec<f64>,
    switch_latency: f64,
    local_rate: f64,
    endpoints: u32,
    classes: LinkClasses,
}

impl Tree {
    fn new(
        arity: Vec<u32>,
        rate: Vec<f64>,
        buckets: Vec<Option<TokenBucket>>,
        latency: Vec<f64>,
        switch_latency: f64,
        local_rate: f64,
        endpoints: u32,
    ) -> Self {
        let mut span = Vec::with_capacity(arity.len());
        let mut s = 1u32;
        for &a in &arity {
            s *= a;
            span.push(s);
        }
        let mut base = Vec::with_capacity(arity.len());
        let mut of_link = Vec::new();
        for l in 0..arity.len() {
            base.push(of_link.len() as u32);
            let children = endpoints / if l == 0 { 1 } else { span[l - 1] };
            of_link.extend(std::iter::repeat_n(l as u8, 2 * children as usize));
        }
        let names = &LEVEL_NAMES[..arity.len().min(LEVEL_NAMES.len())];
        Self {
            classes: LinkClasses {
                names,
                of_link,
                capacity: rate,
                buckets,
            },
            arity,
            span,
            base,
            latency,
            switch_latency,
            local_rate,
            endpoints,
        }
    }

    /// Levels to climb from `a` to reach a switch above `b` too (1 = same group).
    fn climb(&self, a: u32, b: u32) -> usize {
        self.span
            .iter()
            .position(|&s| a / s == b / s)
            .map_or(self.span.len(), |l| l + 1)
    }

    fn path(&self, src: u32, dst: u32, out: &mut Vec<u32>) -> f64 {
        out.clear();
        let h = self.climb(src, dst);
        let mut latency = 0.0;
        let below = |l: usize| if l == 0 { 1 } else { self.span[l - 1] };
        for l in 0..h {
            out.push(self.base[l] + 2 * (src / below(l)));
            latency += self.latency[l];
        }
        for l in (0..h).rev() {
            out.push(self.base[l] + 2 * (dst / below(l)) + 1);
            latency += self.latency[l];
        }
        // Switches crossed: h - 1 up, the common one, h - 1 down.
        latency + (2 * h - 1) as f64 * self.switch_latency
    }
}

impl Topology for Tree {
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
        _rng: &mut SplitMix64,
        out: &mut Route,
    ) {
        out.latency_ns = self.path(src, dst, &mut out.links);
        out.path = 0;
    }

    fn control_latency(&self, src: u32, dst: u32) -> f64 {
        let mut links = Vec::new();
        self.path(src, dst, &mut links)
    }

    fn locality(&self, endpoint: u32) -> Option<Locality> {
        let group = endpoint / self.arity[0];
        let island = match self.span.get(1) {
            Some(&s) => endpoint / s,
            None => 0,
        };
        Some(Locality { group, island })
    }

    fn local_rate(&self) -> f64 {
        self.local_rate
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.classes.capacity[0]
    }
}

/// The packet engine on the hierarchy: each level's link latency, the switch latency as
/// router delay. Up*/down* routes (up to the lowest common switch, then down) have no
/// cyclic channel dependency: one virtual-channel class.
impl PacketTopology for Tree {
    fn link_latency(&self, link: u32) -> f64 {
        self.latency[self.classes.of_link[link as usize] as usize]
    }

    fn router_delay(&self) -> f64 {
        self.switch_latency
    }

    fn max_hops(&self) -> usize {
        2 * self.arity.len()
    }

    fn packet_route(
        &mut self,
        src: u32,
        dst: u32,
        _load: &dyn Fn(u32) -> u64,
        _rng: &mut SplitMix64,
        links: &mut Vec<u32>,
    ) -> u8 {
        self.path(src, dst, links);
        0
    }
}

#[cfg(test)]
mod tests {
    use crate::fabric::registry::FabricSpec;
    use crate::fabric::schema::Value;
    use crate::fabric::{Delivery, Fabric, Kind, Transfer};

    /// 2 islands × 2 groups × 4 nodes: 8 / 1.6 / 0.8 Gbit/s = 1 / 0.2 / 0.1 B/ns.
    fn lab() -> Box<dyn Fabric> {
        let level = |arity: i64, gbps: f64, ns: f64| {
            Value::table([
                ("arity", Value::Int(arity)),
                ("link_bandwidth_gbps", Value::from(gbps)),
                ("link_latency_ns", Value::from(ns)),
            ])
        };
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("tree")),
            ("switch_latency_ns", Value::from(5.0)),
            (
                "levels",
                Value::List(vec![level(4, 8.0, 10.0), level(2, 1.6, 20.0), level(2, 0.8, 40.0)]),
            ),
        ])
        .unwrap();
        spec.build(0).unwrap().fabric
    }

    /// One level of 4 endpoints at 0.8 Gbit/s (0.1 B/ns) behind a bucket of `extra` pairs.
    fn bucketed(extra: &[(&str, Value)]) -> Result<Box<dyn Fabric>, String> {
        shaped(extra, "flow")
    }

    fn shaped(extra: &[(&str, Value)], contention: &str) -> Result<Box<dyn Fabric>, String> {
        let mut level = vec![
            ("arity", Value::Int(4)),
            ("link_bandwidth_gbps", Value::from(0.8)),
        ];
        level.extend(extra.iter().cloned());
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("tree")),
            ("contention", Value::from(contention)),
            ("levels", Value::List(vec![Value::table(level)])),
        ])
        .map_err(|e| e.to_string())?;
        spec.build(0).map(|b| b.fabric).map_err(|e| e.to_string())
    }

    #[test]
    fn a_shaped_level_passes_its_burst_at_the_peak() {
        // 1000 B burst + 500 B packet, peak 8 Gbit/s (1 B/ns) over a 0.1 B/ns rate: both
        // links of a same-group path drain at 0.9 B/ns and empty at 1500/0.9 ns, having
        // passed 1500/0.9 B; the rest goes at 0.1 B/ns.
        let keys = [
            ("burst_bytes", Value::Int(1000)),
            ("max_packet_bytes", Value::Int(500)),
            ("peak_bandwidth_gbps", Value::from(8.0)),
        ];
        let mut f = bucketed(&keys).unwrap();
        let f = f.as_mut();
        f.submit(0.0, &Transfer::new(0, 0, 1, 1000, Kind::Eager));
        assert_eq!(run(f), vec![(0, 1000.0)]);
        let mut f = bucketed(&keys).unwrap();
        let f = f.as_mut();
        f.submit(0.0, &Transfer::new(0, 0, 1, 3000, Kind::Eager));
        let at_peak = 1500.0 / 0.9;
        let got = run(f)[0].1;
        let want = at_peak + (3000.0 - at_peak) / 0.1;
        assert!((got - want).abs() < 1e-6 * want, "{got} vs {want}");
        // Without the keys: the constant-rate link.
        let mut f = bucketed(&[]).unwrap();
        f.submit(0.0, &Transfer::new(0, 0, 1, 1000, Kind::Eager));
        assert_eq!(run(f.as_mut()), vec![(0, 10_000.0)]);
    }

    #[test]
    fn bucket_keys_come_together_and_above_the_rate() {
        let err = |keys: &[(&str, Value)]| bucketed(keys).err().unwrap_or_default();
        let peak = ("peak_bandwidth_gbps", Value::from(8.0));
        let burst = ("burst_bytes", Value::Int(1000));
        assert!(err(std::slice::from_ref(&burst)).contains("levels[0].peak_bandwidth_gbps"));
        assert!(err(std::slice::from_ref(&peak)).contains("levels[0].burst_bytes"));
        let packet = ("max_packet_bytes", Value::Int(9));
        assert!(err(&[packet]).contains("levels[0].max_packet_bytes"));
        let slow = ("peak_bandwidth_gbps", Value::from(0.5));
        assert!(err(&[burst.clone(), slow]).contains("must exceed link_bandwidth_gbps"));
        let empty = ("burst_bytes", Value::Int(0));
        assert!(err(&[empty, peak.clone()]).contains("0 bytes"));
        let overdraft = [burst.clone(), peak.clone(), ("max_packet_bytes", Value::Int(9))];
        let packet = shaped(&overdraft, "packet").err().unwrap_or_default();
        assert!(packet.contains("levels[0].max_packet_bytes"), "{packet}");
        assert!(shaped(&[burst, peak.clone()], "packet").is_ok());
        assert!(shaped(&[("burst_bytes", Value::Int(0)), peak], "packet").is_ok());
    }

    fn run(f: &mut dyn Fabric) -> Vec<(u32, f64)> {
        let mut out: Vec<Delivery> = Vec::new();
        while let Some(t) = f.next_time() {
            f.advance(t, &mut out);
        }
        out.iter().map(|d| (d.id, d.at)).collect()
    }

    #[test]
    fn rates_and_latencies_follow_the_levels_crossed() {
        let mut f = lab();
        let f = f.as_mut();
        assert_eq!(f.endpoints(), Some(16));
        let loc = |e| f.locality(e).map(|l| (l.group, l.island));
        assert_eq!((loc(3), loc(4), loc(8)), (Some((0, 0)), Some((1, 0)), Some((2, 1))));
        // Same group: 2 links of 10 ns, 1 switch; 1000 B at 1 B/ns.
        f.submit(0.0, &Transfer::new(0, 0, 1, 1000, Kind::Eager));
        assert_eq!(run(f), vec![(0, 1000.0 + 20.0 + 5.0)]);
        // Other island: 2×(10+20+40) ns, 5 switches; the island links cap it at 0.1 B/ns.
        f.submit(2000.0, &Transfer::new(1, 0, 8, 1000, Kind::Eager));
        assert_eq!(run(f), vec![(1, 2000.0 + 10_000.0 + 140.0 + 25.0)]);
        // Two flows leaving island 0 share its uplink: 0.05 B/ns each.
        f.submit(20_000.0, &Transfer::new(2, 0, 8, 1000, Kind::Eager));
        f.submit(20_000.0, &Transfer::new(3, 4, 12, 1000, Kind::Eager));
        let both = run(f);
        assert_eq!(both.len(), 2);
        assert!(both.iter().all(|&(_, t)| t == 20_000.0 + 20_000.0 + 165.0), "{both:?}");
        let rts = Transfer::new(4, 0, 8, 1 << 20, Kind::Rts);
        assert_eq!(f.submit(50_000.0, &rts), crate::fabric::Submitted::At(50_165.0));
        let mut stats = Vec::new();
        f.stats(40_165.0, &mut stats);
        assert!(stats.iter().any(|(k, _)| k == "utilisation_level3_max"));
    }
}
