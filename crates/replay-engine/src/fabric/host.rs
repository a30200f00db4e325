//! The host model: what an MPI process costs besides the network, declared once for every
//! fabric model as the `[host]` table of a fabric file.
//! - o and O: CPU overhead per message and per byte, paid at the sender and at the
//!   receiver (LogGP's o, Alexandrov et al. 1995; LogGOPS's O, Hoefler, Schneider &
//!   Lumsdaine 2010);
//! - γ: the local reduction cost per byte a collective combines (Thakur, Rabenseifner &
//!   Gropp 2005);
//! - the eager / rendezvous threshold: messages of at most this many bytes are sent
//!   eagerly, larger ones after a rendezvous (seed 004, Table IV: 8 kB). A replay may
//!   override it (`ReplayOptions::eager_threshold_bytes`).
//!
//! - whether o occupies the CPU: with `overheads_occupy_cpu` a rank's message overheads
//!   and compute run one after another, as LogGP defines o; without (the default, and the
//!   closed forms' assumption) each message's o runs on its own;
//! - noise: the detours that take the CPU from a rank's process (`[host.noise]`, declared
//!   in host/noise.rs with its model and the profile format; off unless given).
//!
//! Whatever else the host adds to a replay belongs here too, so that every fabric takes it
//! the same way.
//!
//! Files written before the table give o, O and γ at their top level, as `overhead_ns`,
//! `overhead_ns_per_byte` and `gamma_ns_per_byte`, or in LogGP's letters as `o_ns` and
//! `O_ns_per_byte`. Those keys still mean the same (stored sweeps, calibrated lab files and
//! users' fabrics keep replaying): `lift_top_level` moves them into the table before it is
//! checked, and a key given twice is refused.

pub mod noise;

use std::collections::BTreeMap;

use self::noise::HostNoise;
use super::schema::{Config, ConfigError, DefaultValue, Param, Type, Value};

/// The host model of one fabric file.
#[derive(Debug, Clone, PartialEq)]
pub struct HostParams {
    /// CPU overhead per message on send and on receive (LogGP o), ns.
    pub overhead_ns: f64,
    /// CPU overhead per byte (LogGOPS O), ns/B.
    pub overhead_ns_per_byte: f64,
    /// Local reduction cost per byte (γ), ns/B.
    pub gamma_ns_per_byte: f64,
    /// Messages of more than this many bytes use rendezvous.
    pub eager_threshold_bytes: u64,
    /// A rank's overheads and compute occupy its CPU one after another (LogGP's o).
    pub overheads_occupy_cpu: bool,
    /// Detours per rank; None: no noise.
    pub noise: Option<HostNoise>,
}

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

/// The parameters of the `[host]` table.
pub const HOST: &[Param] = &[
    Param {
        key: "overhead_ns",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "CPU overhead o per message at sender and receiver (top-level overhead_ns or o_ns in older files)",
    },
    Param {
        key: "overhead_ns_per_byte",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "CPU overhead per byte O at sender and receiver (top-level overhead_ns_per_byte or O_ns_per_byte in older files)",
    },
    Param {
        key: "gamma_ns_per_byte",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "reduction cost gamma per byte combined (top-level gamma_ns_per_byte in older files)",
    },
    Param {
        key: "eager_threshold_bytes",
        ty: Type::Int {
            min: 0,
            max: i64::MAX,
        },
        default: DefaultValue::Int(8192),
        doc: "messages of at most this many bytes are sent eagerly, larger ones by rendezvous (seed 004 Table IV: 8 kB); replay run --eager-threshold overrides it",
    },
    Param {
        key: "overheads_occupy_cpu",
        ty: Type::Bool,
        default: DefaultValue::Bool(false),
        doc: "o occupies the rank's CPU: its messages' overheads and compute run one after another, as LogGP defines o (Alexandrov et al. 1995, section 2); false: each message's o runs on its own, as the closed forms assume",
    },
    noise::TABLE,
];

/// The `[host]` key every fabric file may carry.
pub const TABLE: Param = Param {
    key: "host",
    ty: Type::Table(HOST),
    default: DefaultValue::Empty,
    doc: "the host model: CPU overheads, reduction cost, eager threshold, noise (host.* below)",
};

/// Top-level keys of files written before the `[host]` table, and the host key each is.
const TOP_LEVEL: &[(&str, &str)] = &[
    ("overhead_ns", "overhead_ns"),
    ("overhead_ns_per_byte", "overhead_ns_per_byte"),
    ("gamma_ns_per_byte", "gamma_ns_per_byte"),
    // LogGP's letters (the loggp model's own keys before the table)
    ("o_ns", "overhead_ns"),
    ("O_ns_per_byte", "overhead_ns_per_byte"),
];

impl HostParams {
    /// The host model of a validated fabric configuration (its `host` table).
    pub fn of(config: &Config) -> Self {
        let h = config.table(TABLE.key);
        Self {
            overhead_ns: h.f64("overhead_ns"),
            overhead_ns_per_byte: h.f64("overhead_ns_per_byte"),
            gamma_ns_per_byte: h.f64("gamma_ns_per_byte"),
            eager_threshold_bytes: u64::try_from(h.i64("eager_threshold_bytes"))
                .expect("declared >= 0"),
            overheads_occupy_cpu: h.bool("overheads_occupy_cpu"),
            noise: HostNoise::of(&h),
        }
    }
}

/// Moves the host keys `table` gives at its top level into its `[host]` table (see the
/// module comment). Returns, for each key moved, its top-level spelling and its host key,
/// so that errors can name what the file says.
pub fn lift_top_level(
    table: &mut BTreeMap<String, Value>,
) -> Result<Vec<(&'static str, &'static str)>, ConfigError> {
    let mut moved: Vec<(&'static str, &'static str)> = Vec::new();
    for &(spelling, key) in TOP_LEVEL {
        let Some(value) = table.remove(spelling) else {
            continue;
        };
        let twice = |other: String| ConfigError {
            key: spelling.into(),
            message: format!(
                "the host's {key} is given twice, here and as {other}; keep host.{key}"
            ),
        };
        if let Some(&(first, _)) = moved.iter().find(|m| m.1 == key) {
            return Err(twice(first.to_string()));
        }
        let host = table
            .entry(TABLE.key.to_string())
            .or_insert_with(|| Value::Table(BTreeMap::new()));
        // A `host` that is no table is left for validation to name.
        if let Value::Table(host) = host {
            if host.contains_key(key) {
                return Err(twice(format!("host.{key}")));
            }
            host.insert(key.to_string(), value);
            moved.push((spelling, key));
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::schema;

    fn table(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn host_of(mut t: BTreeMap<String, Value>) -> Result<HostParams, ConfigError> {
        lift_top_level(&mut t)?;
        Ok(HostParams::of(&schema::validate(&t, &[&[TABLE]], "")?))
    }

    #[test]
    fn defaults_and_the_table_give_the_host_model() {
        let none = host_of(table(&[])).unwrap();
        assert_eq!((none.overhead_ns, none.gamma_ns_per_byte), (0.0, 0.0));
        let given = table(&[(
            "host",
            Value::table([
                ("overhead_ns", Value::from(300.0)),
                ("eager_threshold_bytes", Value::Int(4096)),
            ]),
        )]);
        let h = host_of(given).unwrap();
        assert_eq!((h.overhead_ns, h.eager_threshold_bytes), (300.0, 4096));
        // Without a value, the declared default.
        let declared = HOST.iter().find(|p| p.key == "eager_threshold_bytes");
        assert!(matches!(
            declared.map(|p| p.default),
            Some(DefaultValue::Int(d)) if d as u64 == none.eager_threshold_bytes
        ));
    }

    #[test]
    fn top_level_spellings_mean_the_table_keys() {
        let old = table(&[
            ("overhead_ns", Value::from(300.0)),
            ("gamma_ns_per_byte", Value::from(0.05)),
        ]);
        let new = table(&[(
            "host",
            Value::table([
                ("overhead_ns", Value::from(300.0)),
                ("gamma_ns_per_byte", Value::from(0.05)),
            ]),
        )]);
        assert_eq!(host_of(old).unwrap(), host_of(new).unwrap());
        let loggp = table(&[
            ("o_ns", Value::from(7.0)),
            ("O_ns_per_byte", Value::from(0.5)),
        ]);
        let h = host_of(loggp).unwrap();
        assert_eq!((h.overhead_ns, h.overhead_ns_per_byte), (7.0, 0.5));
    }

    #[test]
    fn a_host_key_given_twice_is_refused_naming_both() {
        let both = table(&[
            ("overhead_ns", Value::from(1.0)),
            ("host", Value::table([("overhead_ns", Value::from(2.0))])),
        ]);
        let e = host_of(both).unwrap_err();
        assert_eq!(e.key, "overhead_ns");
        assert!(e.message.contains("host.overhead_ns"), "{e}");
        let letters = table(&[
            ("overhead_ns", Value::from(1.0)),
            ("o_ns", Value::from(2.0)),
        ]);
        let e = host_of(letters).unwrap_err();
        assert_eq!(e.key, "o_ns");
        assert!(
            e.message.contains("given twice, here and as overhead_ns"),
            "{e}"
        );
    }
}
