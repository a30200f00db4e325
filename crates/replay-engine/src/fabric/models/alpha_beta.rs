//! The α-β(-γ) model (Hockney; Thakur, Rabenseifner & Gropp, IJHPCA 2005): a message of n
//! bytes costs α + nβ, with no rendezvous handshake; γ per byte reduced and the optional
//! CPU overheads o + nO are the host model's (fabric/host.rs), costs the engine charges.
//!
//! Endpoints have `ports` send and receive ports (fabric/ports.rs): the default 1 is the
//! single-port, full-duplex endpoint of the Hockney model as Pješivac-Grbović et al. (2007)
//! apply it to Open MPI's collectives, so a root's linear bcast of p-1 messages takes
//! (p-1)(α + nβ). A message holds its send port and then its destination's receive port
//! for α + nβ each. `ports = 0` is the contention-free form: every message costs exactly
//! α + nβ whatever else is in flight, and collectives have closed forms (engine/plan/).

use crate::fabric::ports::{Costs, PortedLinks};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer};

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "alpha_beta",
    doc: "alpha-beta-gamma cost model (Hockney; Thakur et al. 2005): a message costs alpha + n*beta, single-port endpoints by default, no handshake",
    params: &[
        &[
            Param {
                key: "alpha_us",
                ty: NON_NEGATIVE,
                default: DefaultValue::Required,
                doc: "latency alpha of every message",
            },
            Param {
                key: "beta_ns_per_byte",
                ty: NON_NEGATIVE,
                default: DefaultValue::Required,
                doc: "transfer time per byte (1 / bandwidth)",
            },
            Param {
                key: "ports",
                ty: Type::Int { min: 0, max: 1024 },
                default: DefaultValue::Int(1),
                doc: "messages an endpoint sends (and receives) at once, each holding its port for alpha + n*beta; 0 = unlimited (contention-free, closed-form collectives)",
            },
        ],
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let ports = c.u32("ports");
    let fabric = AlphaBeta {
        alpha_ns: c.f64("alpha_us") * 1000.0,
        beta_ns_per_byte: c.f64("beta_ns_per_byte"),
        links: (ports > 0).then(|| PortedLinks::new(ports)),
    };
    Ok(Built {
        fabric: Box::new(fabric),
        handshake: false,
    })
}

pub struct AlphaBeta {
    pub alpha_ns: f64,
    pub beta_ns_per_byte: f64,
    /// Endpoint ports, None = unlimited.
    links: Option<PortedLinks>,
}

impl Fabric for AlphaBeta {
    fn endpoints(&self) -> Option<u32> {
        None
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        1.0 / self.beta_ns_per_byte
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        if t.kind.is_control() {
            return Submitted::At(now + self.alpha_ns);
        }
        let cost = self.alpha_ns + t.bytes as f64 * self.beta_ns_per_byte;
        let Some(links) = self.links.as_mut() else {
            // Exactly α + nβ: the closed forms of Thakur et al. assume nothing else.
            return Submitted::At(now + self.alpha_ns + t.bytes as f64 * self.beta_ns_per_byte);
        };
        // It reaches the destination's NIC as it leaves, and holds each port for α + nβ.
        let costs = Costs {
            send_busy: cost,
            recv_busy: cost,
            lead: 0.0,
            wire: cost,
        };
        links.submit(now, t, costs);
        Submitted::Later
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn next_time(&mut self) -> Option<Time> {
        self.links.as_ref().and_then(PortedLinks::next_time)
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        if let Some(links) = self.links.as_mut() {
            links.advance(now, delivered);
        }
    }

    fn alpha_beta(&self) -> Option<(f64, f64)> {
        // Only unlimited ports make every message cost α + nβ whatever else is in flight.
        self.links
            .is_none()
            .then_some((self.alpha_ns, self.beta_ns_per_byte))
    }

    fn holds_transfers(&self) -> bool {
        self.links.is_some()
    }

    fn serves_in_post_order(&self) -> bool {
        self.links.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::registry::FabricSpec;
    use crate::fabric::schema::Value;
    use crate::fabric::Kind;

    fn transfer(id: u32, src: u32, dst: u32, bytes: u64) -> Transfer {
        Transfer::new(id, src, dst, bytes, Kind::Eager)
    }

    fn spec(ports: Option<i64>) -> FabricSpec {
        let mut pairs = vec![
            ("model", Value::from("alpha_beta")),
            ("alpha_us", Value::from(1.0)),
            ("beta_ns_per_byte", Value::Int(1)),
        ];
        if let Some(k) = ports {
            pairs.push(("ports", Value::Int(k)));
        }
        FabricSpec::from_pairs(pairs).unwrap()
    }

    #[test]
    fn unlimited_ports_cost_alpha_plus_n_beta_from_its_toml_keys() {
        let Built {
            mut fabric,
            handshake,
        } = spec(Some(0)).build(0).unwrap();
        assert!(!handshake);
        assert_eq!(fabric.submit(5.0, &transfer(0, 0, 1, 8)), Submitted::At(1013.0));
        // No sender serialization with unlimited ports.
        assert_eq!(fabric.submit(5.0, &transfer(1, 0, 2, 8)), Submitted::At(1013.0));
        assert_eq!(fabric.alpha_beta(), Some((1000.0, 1.0)));
        assert!(!fabric.holds_transfers());
    }

    #[test]
    fn a_single_port_endpoint_sends_and_receives_one_message_at_a_time() {
        let Built { mut fabric, .. } = spec(None).build(0).unwrap();
        assert_eq!(fabric.alpha_beta(), None);
        assert!(fabric.holds_transfers());
        let f = fabric.as_mut();
        // 0 -> 1 at once; 0 -> 2 waits for 0's port (leaves at 1008, arrives 2016);
        // 3 -> 2 meanwhile: 2's receive port is free until 0 -> 2 arrives at 1008;
        // 4 -> 1 with 0 -> 1: 1's receive port is busy until 1008
        for (id, src, dst) in [(0, 0, 1), (1, 0, 2), (2, 3, 2), (3, 4, 1)] {
            let t = Transfer {
                send_posted: u64::from(id),
                recv_posted: u64::from(id),
                ..transfer(id, src, dst, 8)
            };
            assert_eq!(f.submit(0.0, &t), Submitted::Later);
        }
        let mut out = Vec::new();
        while let Some(t) = f.next_time() {
            f.advance(t, &mut out);
        }
        let got: Vec<(u32, f64)> = out.iter().map(|d| (d.id, d.at)).collect();
        assert_eq!(got, vec![(0, 1008.0), (2, 1008.0), (3, 2016.0), (1, 2016.0)]);
    }
}
