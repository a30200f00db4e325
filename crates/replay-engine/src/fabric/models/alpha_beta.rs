//! The α-β(-γ) model (Hockney; Thakur, Rabenseifner & Gropp, IJHPCA 2005): a message of n
//! bytes costs exactly α + nβ, with no contention and no rendezvous handshake; γ per byte
//! reduced and the optional CPU overheads o + nO are host costs the engine charges.

use crate::config::{host_params, HostParams, HOST};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Fabric, Submitted, Time, Transfer};

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

pub const MODEL: Model = Model {
    name: "alpha_beta",
    doc: "alpha-beta-gamma cost model (Hockney; Thakur et al. 2005): a message costs alpha + n*beta, no contention, no handshake",
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
        ],
        HOST,
    ],
    build,
};

fn build(c: &Config, _seed: u64) -> Result<Built, ConfigError> {
    let fabric = AlphaBeta {
        alpha_ns: c.f64("alpha_us") * 1000.0,
        beta_ns_per_byte: c.f64("beta_ns_per_byte"),
    };
    let host = HostParams {
        handshake: false,
        ..host_params(c)
    };
    Ok(Built {
        fabric: Box::new(fabric),
        host,
    })
}

pub struct AlphaBeta {
    pub alpha_ns: f64,
    pub beta_ns_per_byte: f64,
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
        // Exactly α + nβ: the closed forms of Thakur et al. assume nothing else.
        Submitted::At(now + self.alpha_ns + t.bytes as f64 * self.beta_ns_per_byte)
    }

    fn control_at_once(&self) -> bool {
        true
    }

    fn next_time(&mut self) -> Option<Time> {
        None
    }

    fn advance(&mut self, _now: Time, _delivered: &mut Vec<crate::fabric::Delivery>) {}

    fn alpha_beta(&self) -> Option<(f64, f64)> {
        Some((self.alpha_ns, self.beta_ns_per_byte))
    }

    fn holds_transfers(&self) -> bool {
        false
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

    #[test]
    fn costs_alpha_plus_n_beta_from_its_toml_keys() {
        let spec = FabricSpec::from_pairs([
            ("model", Value::from("alpha_beta")),
            ("alpha_us", Value::from(1.0)),
            ("beta_ns_per_byte", Value::Int(1)),
        ])
        .unwrap();
        let Built { mut fabric, host } = spec.build(0).unwrap();
        assert!(!host.handshake);
        assert_eq!(fabric.submit(5.0, &transfer(0, 0, 1, 8)), Submitted::At(1013.0));
        // No sender serialization in the α-β form.
        assert_eq!(fabric.submit(5.0, &transfer(1, 0, 2, 8)), Submitted::At(1013.0));
        assert_eq!(fabric.alpha_beta(), Some((1000.0, 1.0)));
    }
}
