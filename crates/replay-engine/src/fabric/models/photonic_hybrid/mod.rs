//! Hybrid electrical / photonic network of seed 004 ("Multi-Layer Silicon Nanophotonic
//! Network Chips for HPC", §IV-B, Table IV): messages below the MPI rendezvous threshold go
//! on an electrical packet network (a 3-D torus, flow model); larger ones on circuits of a
//! photonic butterfly chip that the rendezvous RTS reserves over a low-speed electrical
//! setup network (`fabric/photonic_switches/circuit_setup.rs`: SETUP / PATH-ACK / TEARDOWN, path timeout,
//! incremental randomized backoff).
//!
//! Mapping of the rendezvous onto the setup protocol (§I: "we use the small message that
//! must be sent anyway … to also reserve circuit-path resources"): the RTS rides the SETUP
//! and reaches the receiver when the SETUP first does; the receiver's CTS is the PATH-ACK
//! (a SETUP waits at the destination until the receiver answers, and times out like any
//! other if that takes longer than the path timeout, so no circuit is held on a receiver);
//! the data then leaves on the circuit. A message at or above the
//! threshold that comes without an RTS (eager by the engine's threshold, background) sends
//! its SETUP when it is submitted and follows its PATH-ACK.

use crate::fabric::photonic_switches::butterfly::Butterfly;
use crate::fabric::photonic_switches::circuit_setup::{CircuitChip, SetupParams, PATH_CIRCUIT};
use crate::fabric::flow::network::FlowNetwork;
use crate::fabric::flow::graphs::{Duplex, Graph, Routing, Shape};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Delivery, Fabric, Kind, Submitted, Time, Transfer, TransferId};
use crate::prng::SplitMix64;

const POSITIVE: Type = Type::Float {
    min: 1e-9,
    max: f64::INFINITY,
};
const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

const fn float(key: &'static str, ty: Type, value: f64, doc: &'static str) -> Param {
    Param {
        key,
        ty,
        default: DefaultValue::Float(value),
        doc,
    }
}

pub const MODEL: Model = Model {
    name: "photonic_hybrid",
    doc: "electrical torus for small messages + photonic butterfly circuits set up by the rendezvous RTS (seed 004)",
    params: &[
        &[
            Param {
                key: "threshold_bytes",
                ty: Type::Int {
                    min: 0,
                    max: 1 << 40,
                },
                default: DefaultValue::Int(8192),
                doc: "messages of at least this many bytes take circuits (Table IV: MPI rendezvous threshold 8 kB)",
            },
            Param {
                key: "torus_dims",
                ty: Type::IntList {
                    min: 1,
                    max: 1 << 24,
                    len: (3, 3),
                },
                default: DefaultValue::Required,
                doc: "[x, y, z] routers of the electrical data network, one endpoint each (Table IV: 3D torus)",
            },
            float("torus_link_gbps", POSITIVE, 10.0, "electrical data link bandwidth (Table IV: 10 Gbps)"),
            float(
                "torus_hop_ns",
                NON_NEGATIVE,
                34.0,
                "electrical data network per hop: link 30 + crossbar 2 + arbitration 2 ns (Table IV)",
            ),
            Param {
                key: "chip_radix",
                ty: Type::Int { min: 2, max: 1024 },
                default: DefaultValue::Int(4),
                doc: "switch radix of the butterfly chip; stages = fewest covering the endpoints (§III-C: 4-ary, 5 stages for 1000 ports)",
            },
            Param {
                key: "wavelengths",
                ty: Type::Int { min: 1, max: 4096 },
                default: DefaultValue::Int(71),
                doc: "wavelengths of a circuit (Table III: butterfly 71, fat tree 23, Clos 19)",
            },
            float("wavelength_gbps", POSITIVE, 10.0, "single wavelength data rate (Table IV: 10 Gbps)"),
            float(
                "circuit_propagation_ns",
                NON_NEGATIVE,
                100.0,
                "circuit propagation delay (Table IV: 100 ns)",
            ),
            float(
                "setup_link_gbps",
                POSITIVE,
                1.0,
                "setup network link bandwidth (Table IV: 1 Gbps)",
            ),
            float(
                "setup_hop_ns",
                NON_NEGATIVE,
                104.0,
                "setup network per hop besides serialization: link 100 + crossbar 2 + arbitration 2 ns (Table IV)",
            ),
            Param {
                key: "setup_message_bytes",
                ty: Type::Int { min: 1, max: 256 },
                default: DefaultValue::Int(16),
                doc: "size of a SETUP / PATH-ACK / TEARDOWN (not in the seed; at most the 256 B setup MTU of Table IV)",
            },
            float(
                "path_timeout_ns",
                POSITIVE,
                15000.0,
                "SETUP without PATH-ACK this long is torn down (Table IV, Protocol: 15 us; the setup network row says 10 us)",
            ),
            float(
                "backoff_ns",
                NON_NEGATIVE,
                1000.0,
                "backoff unit: uniform in [0, k x this) after the k-th timeout (the seed gives no value)",
            ),
        ],
    ],
    build,
};

fn build(c: &Config, seed: u64) -> Result<Built, ConfigError> {
    let d = c.i64s("torus_dims");
    let shape = Shape::Torus3d {
        x: d[0] as u32,
        y: d[1] as u32,
        z: d[2] as u32,
    };
    let torus = Graph::new(
        shape,
        Duplex::Full,
        Routing::DModK,
        c.f64("torus_link_gbps") / 8.0, // Gbit/s → bytes/ns
        c.f64("torus_hop_ns"),
    )
    .map_err(|message| ConfigError {
        key: "torus_dims".into(),
        message,
    })?;
    let endpoints = torus.endpoints();
    let chip = Butterfly::covering(c.u32("chip_radix"), endpoints);
    let serialization = c.i64("setup_message_bytes") as f64 * 8.0 / c.f64("setup_link_gbps");
    let p = SetupParams {
        hop_ns: c.f64("setup_hop_ns") + serialization,
        timeout_ns: c.f64("path_timeout_ns"),
        backoff_ns: c.f64("backoff_ns"),
        rate: f64::from(c.u32("wavelengths")) * c.f64("wavelength_gbps") / 8.0,
        propagation_ns: c.f64("circuit_propagation_ns"),
    };
    Ok(Built {
        fabric: Box::new(PhotonicHybrid {
            threshold: c.i64("threshold_bytes") as u64,
            torus: FlowNetwork::new(torus, SplitMix64::new(seed ^ 0xFAB)),
            chip: CircuitChip::new(chip, p, seed ^ 0xC1C),
            counts: Counts::default(),
        }),
        handshake: true,
    })
}

/// Messages and bytes per network (data transfers only).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    packet_msgs: u64,
    packet_bytes: f64,
    circuit_msgs: u64,
    circuit_bytes: f64,
    circuit_delivered: u64,
}

pub struct PhotonicHybrid {
    threshold: u64,
    torus: FlowNetwork<Graph>,
    chip: CircuitChip,
    counts: Counts,
}

impl PhotonicHybrid {
    /// Whether every circuit was torn down and every link of the chip is free again.
    pub fn is_drained(&self) -> bool {
        self.chip.held_links() == 0 && self.chip.open_circuits() == 0
    }

    fn on_circuit(&self, t: &Transfer) -> bool {
        t.src != t.dst && t.bytes >= self.threshold
    }

    fn setup_data(&mut self, now: Time, id: TransferId, t: &Transfer) {
        self.counts.circuit_msgs += 1;
        self.counts.circuit_bytes += t.bytes as f64;
        if self.chip.has_circuit(id) {
            self.chip.send_data(now, id, t.bytes);
        } else {
            self.chip.setup(now, id, t.src, t.dst, false, Some(t.bytes));
        }
    }
}

impl Fabric for PhotonicHybrid {
    fn endpoints(&self) -> Option<u32> {
        self.torus.endpoints()
    }

    fn injection_rate(&self, endpoint: u32) -> f64 {
        self.torus.injection_rate(endpoint)
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        if !self.on_circuit(t) {
            if !t.kind.is_control() {
                self.counts.packet_msgs += 1;
                self.counts.packet_bytes += t.bytes as f64;
            }
            return self.torus.submit(now, t);
        }
        match t.kind {
            Kind::Rts => {
                self.chip.setup(now, t.id, t.src, t.dst, true, None);
                Submitted::Later
            }
            // The receiver's answer: the PATH-ACK carries it back over the setup network.
            Kind::Cts => {
                self.chip.receiver_ready(now, t.id);
                Submitted::Later
            }
            _ => {
                self.setup_data(now, t.id, t);
                Submitted::Later
            }
        }
    }

    fn next_time(&mut self) -> Option<Time> {
        match (self.torus.next_time(), self.chip.next_time()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        self.torus.advance(now, delivered);
        let before = delivered.len();
        self.chip.advance(now, delivered);
        self.counts.circuit_delivered += delivered[before..]
            .iter()
            .filter(|d| d.info.path == PATH_CIRCUIT)
            .count() as u64;
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["packet", "circuit"]
    }

    fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        let c = self.counts;
        let s = self.chip.stats;
        let msgs = (c.packet_msgs + c.circuit_msgs).max(1) as f64;
        let bytes = (c.packet_bytes + c.circuit_bytes).max(1.0);
        out.extend([
            ("packet_messages".into(), c.packet_msgs as f64),
            ("circuit_messages".into(), c.circuit_msgs as f64),
            ("circuit_message_share".into(), c.circuit_msgs as f64 / msgs),
            ("circuit_byte_share".into(), c.circuit_bytes / bytes),
            ("circuit_setups".into(), s.setups as f64),
            ("circuit_timeouts".into(), s.timeouts as f64),
            (
                "circuit_timeouts_at_destination".into(),
                s.timeouts_at_destination as f64,
            ),
            ("circuits_established".into(), s.circuits as f64),
            ("circuits_delivered".into(), c.circuit_delivered as f64),
            (
                "setup_ns_mean".into(),
                s.setup_ns_total / (s.circuits.max(1) as f64),
            ),
            ("setup_ns_max".into(), s.setup_ns_max),
            ("chip_stages".into(), f64::from(self.chip.chip().stages())),
            ("chip_link_utilisation_mean".into(), self.chip.link_utilisation(now)),
            ("chip_links_held".into(), self.chip.held_links() as f64),
            ("circuits_open".into(), self.chip.open_circuits() as f64),
        ]);
        let mut torus = Vec::new();
        self.torus.stats(now, &mut torus);
        out.extend(torus.into_iter().map(|(k, v)| (format!("torus_{k}"), v)));
    }
}

#[cfg(test)]
mod tests;
