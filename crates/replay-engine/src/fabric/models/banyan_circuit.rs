//! The Gemini interconnect of seed 003 (Baw, Chamberlain, Franklin & Wrighton, 1999): an
//! N × N Banyan whose optical data path is circuit-switched, set up and torn down by
//! signals on a parallel packet-switched electrical Banyan (fabric/photonic_networks/banyan_circuit/), with the basic
//! setup–teardown or the VOQ protocol.
//!
//! MPI traffic: messages travel optically; messages of at most `electrical_max_bytes` (none
//! by default, as in §4.3's simulations) travel as electrical packets, as the conceptual
//! design intends for small messages (§4.3). The rendezvous RTS and CTS are small messages,
//! so they travel on the electrical network as packets of one signal's length
//! (`rendezvous = "electrical"`), where they queue with the control signals.

use crate::fabric::photonic_networks::banyan_circuit::{Done, Gemini, GeminiParams, Protocol};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer, TransferInfo};

const POSITIVE: Type = Type::Float {
    min: 1e-9,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "banyan_circuit",
    doc: "Gemini: circuit-switched optical Banyan set up by an electrical packet-switched control Banyan, basic or VOQ protocol (seed 003: Baw et al. 1999)",
    params: &[
        &[
            Param {
                key: "ports",
                ty: Type::Int { min: 2, max: 256 },
                default: DefaultValue::Int(16),
                doc: "network size N (a power of two; seed 003: 4 to 32)",
            },
            Param {
                key: "optical_gbps",
                ty: POSITIVE,
                default: DefaultValue::Float(2.4),
                doc: "optical link rate BW_o (§2: 2.4 Gb/s through three optical stages)",
            },
            Param {
                key: "electrical_gbps",
                ty: POSITIVE,
                default: DefaultValue::Float(0.2),
                doc: "electrical link rate BW_e (Θ = BW_o / BW_e = 12 as in §4.3)",
            },
            Param {
                key: "signal_bytes",
                ty: Type::Int { min: 1, max: 1 << 20 },
                default: DefaultValue::Int(64),
                doc: "control signal length l_sig (Γ = 16384 for 1 MiB messages as in §4.3)",
            },
            Param {
                key: "alpha_sig",
                ty: Type::Float {
                    min: 0.0,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(1.25),
                doc: "signal processing time per switch in units of t_sig (§4.3: 1.25)",
            },
            Param {
                key: "protocol",
                ty: Type::Choice(&["basic", "voq"]),
                default: DefaultValue::Str("basic"),
                doc: "basic setup-teardown (§4) or virtual output queues with setup bursts (§5)",
            },
            Param {
                key: "retry_pause_signals",
                ty: Type::Float {
                    min: 0.0,
                    max: f64::INFINITY,
                },
                default: DefaultValue::Float(1.0),
                doc: "pause before a blocked source tries again, in t_sig (§5: 'a brief pause')",
            },
            Param {
                key: "electrical_max_bytes",
                ty: Type::Int { min: 0, max: 1 << 40 },
                default: DefaultValue::Int(0),
                doc: "messages up to this size travel as electrical packets (§4.3 simulates none)",
            },
            Param {
                key: "rendezvous",
                ty: Type::Choice(&["electrical", "none"]),
                default: DefaultValue::Str("electrical"),
                doc: "electrical: RTS/CTS are one-signal packets on the control network; none: no handshake",
            },
        ],
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let params = GeminiParams {
        optical_rate: c.f64("optical_gbps") / 8.0,
        electrical_rate: c.f64("electrical_gbps") / 8.0,
        signal_bytes: c.i64("signal_bytes") as u64,
        alpha_sig: c.f64("alpha_sig"),
        protocol: match c.str("protocol") {
            "voq" => Protocol::Voq,
            _ => Protocol::Basic,
        },
        retry_pause_ns: 0.0,
    };
    let params = GeminiParams {
        retry_pause_ns: c.f64("retry_pause_signals") * params.t_sig(),
        ..params
    };
    let gemini = Gemini::new(c.u32("ports"), params).map_err(|message| ConfigError {
        key: "ports".into(),
        message,
    })?;
    Ok(Built {
        fabric: Box::new(BanyanCircuit {
            gemini,
            electrical_max: c.i64("electrical_max_bytes") as u64,
            done: Vec::new(),
        }),
        handshake: c.str("rendezvous") == "electrical",
    })
}

const OPTICAL: u8 = 0;
const ELECTRICAL: u8 = 1;

pub struct BanyanCircuit {
    gemini: Gemini,
    electrical_max: u64,
    done: Vec<Done>,
}

impl Fabric for BanyanCircuit {
    fn endpoints(&self) -> Option<u32> {
        Some(self.gemini.ports())
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.gemini.params().optical_rate
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let g = &mut self.gemini;
        if t.src == t.dst {
            // Two ranks on one terminal: a copy at the optical rate, outside the network.
            return Submitted::At(now + t.bytes as f64 / g.params().optical_rate);
        }
        if t.kind.is_control() {
            let l_sig = g.params().signal_bytes;
            g.send_packet(now, t.id, t.src, t.dst, l_sig);
        } else if t.bytes <= self.electrical_max {
            g.send_packet(now, t.id, t.src, t.dst, t.bytes);
        } else {
            g.send_optical(now, t.id, t.src, t.dst, t.bytes);
        }
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.gemini.next_time()
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        self.done.clear();
        self.gemini.advance(now, &mut self.done);
        let hops = self.gemini.stages() + 1;
        delivered.extend(self.done.iter().map(|d| Delivery {
            id: d.token,
            at: d.at,
            info: TransferInfo {
                setup_ns: d.setup_ns,
                wait_ns: d.wait_ns,
                blocked: d.blocked,
                hops,
                path: if d.optical { OPTICAL } else { ELECTRICAL },
            },
        }));
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["optical", "electrical"]
    }

    fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        out.push(("ports".into(), f64::from(self.gemini.ports())));
        self.gemini.stats(now, out);
    }
}
