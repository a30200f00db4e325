//! Model name → declaration and builder. Every module of `src/fabric/models/` exports a
//! `pub const MODEL: Model` and build.rs lists them (plus the test fixtures under
//! `tests/fixture_fabrics/` with the `fixture-fabrics` feature): adding a fabric is adding
//! its module and its bundled TOML, nothing else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::host::{self, HostParams};
use super::schema::{self, Config, ConfigError, DefaultValue, Param, Type, Value};
use super::Fabric;

/// A fabric model: its parameters and how to build it from a validated configuration.
pub struct Model {
    pub name: &'static str,
    /// One line: what the model is and where it comes from.
    pub doc: &'static str,
    pub params: &'static [&'static [Param]],
    pub build: fn(&Config, u64) -> Result<Built, ConfigError>,
}

/// A built fabric, and how MPI's rendezvous maps onto it.
pub struct Built {
    pub fabric: Box<dyn Fabric>,
    /// Whether messages above the eager threshold pay a rendezvous handshake (RTS/CTS) on
    /// this fabric. The α-β-γ form has none (a message costs exactly α + nβ).
    pub handshake: bool,
}

/// Keys every fabric file may carry besides its model's own (the host model among them).
pub const COMMON: &[Param] = &[
    Param {
        key: "model",
        ty: Type::Str,
        default: DefaultValue::Required,
        doc: "the model (see `tailcast replay fabrics --describe`)",
    },
    Param {
        key: "name",
        ty: Type::Str,
        default: DefaultValue::Absent,
        doc: "a short name for reports (default: the file name)",
    },
    Param {
        key: "description",
        ty: Type::Str,
        default: DefaultValue::Absent,
        doc: "one line shown by `tailcast replay fabrics`",
    },
    Param {
        key: "nodes",
        ty: Type::Str,
        default: DefaultValue::Absent,
        doc: "host names of endpoints 0, 1, … as a Slurm hostlist (placement by node list)",
    },
    host::TABLE,
];

/// All models, in name order.
pub fn models() -> Vec<&'static Model> {
    let mut all: Vec<&'static Model> = super::models::MODELS.to_vec();
    all.sort_by_key(|m| m.name);
    all
}

pub fn find(name: &str) -> Option<&'static Model> {
    super::models::MODELS
        .iter()
        .copied()
        .find(|m| m.name == name)
}

/// A validated fabric configuration: which model, and its parameters.
#[derive(Clone)]
pub struct FabricSpec {
    pub model: &'static Model,
    pub config: Config,
}

impl std::fmt::Debug for FabricSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FabricSpec")
            .field("model", &self.model.name)
            .field("config", &self.config)
            .finish()
    }
}

/// Fabric tables validated and fabrics built by this process: a replay validates its
/// fabric file once and builds it once, and `fabric_work` lets a test see that (building a
/// large topology or checking a large table twice is work a user pays for).
static VALIDATED: AtomicU64 = AtomicU64::new(0);
static BUILT: AtomicU64 = AtomicU64::new(0);

/// (tables validated, fabrics built) so far in this process.
pub fn fabric_work() -> (u64, u64) {
    (
        VALIDATED.load(Ordering::Relaxed),
        BUILT.load(Ordering::Relaxed),
    )
}

/// A fabric spec whose model was built once to check it (a model checks the values that
/// depend on each other, e.g. a buffer that must hold a packet, as it builds), keeping that
/// build for the first replay with the same seed: a fabric file is then checked at load and
/// built once for one replay.
pub struct CheckedFabric {
    pub spec: FabricSpec,
    kept: Mutex<Option<(u64, Built)>>,
}

impl std::fmt::Debug for CheckedFabric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.spec.fmt(f)
    }
}

impl CheckedFabric {
    /// Builds `spec` with `seed`, keeping the build.
    pub fn check(spec: FabricSpec, seed: u64) -> Result<Self, ConfigError> {
        let built = spec.build(seed)?;
        Ok(Self {
            spec,
            kept: Mutex::new(Some((seed, built))),
        })
    }

    /// A spec not built yet (it builds when a replay asks).
    pub fn unchecked(spec: FabricSpec) -> Self {
        Self {
            spec,
            kept: Mutex::new(None),
        }
    }

    /// The kept build when it was made with `seed` (once), else a fresh one.
    pub fn take_or_build(&self, seed: u64) -> Result<Built, ConfigError> {
        let kept = self.kept.lock().map(|mut k| k.take()).unwrap_or(None);
        match kept {
            Some((s, built)) if s == seed => Ok(built),
            _ => self.spec.build(seed),
        }
    }

    /// `read` of the kept build (a fresh one, kept, when there is none): its layout, for
    /// whoever must place something before the replay.
    pub fn read<R>(&self, read: impl FnOnce(&Built) -> R) -> Result<R, ConfigError> {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.is_none() {
            *kept = Some((0, self.spec.build(0)?));
        }
        Ok(read(&kept.as_ref().expect("kept above").1))
    }
}

impl FabricSpec {
    /// Validates a whole fabric table (as read from its TOML file).
    pub fn parse(value: &Value) -> Result<Self, ConfigError> {
        let Value::Table(given) = value else {
            return Err(ConfigError {
                key: "(top)".into(),
                message: "expected a table".into(),
            });
        };
        let names = || {
            models()
                .iter()
                .map(|m| m.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let model = match given.get("model") {
            Some(Value::Str(name)) => find(name).ok_or_else(|| ConfigError {
                key: "model".into(),
                message: format!("expected one of {}, got {name:?}", names()),
            })?,
            Some(_) | None => {
                return Err(ConfigError {
                    key: "model".into(),
                    message: format!("is required (one of {})", names()),
                })
            }
        };
        let mut table = given.clone();
        let lifted = host::lift_top_level(&mut table)?;
        let mut groups: Vec<&[Param]> = vec![COMMON];
        groups.extend(model.params.iter().copied());
        let config = schema::validate(&table, &groups, "").map_err(|mut e| {
            // A host key the file gives at its top level: name it as the file does.
            if let Some((spelling, _)) = lifted
                .iter()
                .find(|(_, key)| e.key == format!("{}.{key}", host::TABLE.key))
            {
                e.key = spelling.to_string();
            }
            // A key of another model usually means the wrong `model` (e.g. alpha_us under
            // loggp, which is the alpha_beta model's).
            if let Some(other) = models().into_iter().find(|m| {
                m.name != model.name
                    && m.params
                        .iter()
                        .flat_map(|g| g.iter())
                        .any(|p| p.key == e.key)
            }) {
                e.message += &format!("; {} is a key of model {}", e.key, other.name);
            }
            e
        })?;
        VALIDATED.fetch_add(1, Ordering::Relaxed);
        Ok(Self { model, config })
    }

    /// Builds a fresh fabric (random choices seeded by `seed`).
    pub fn build(&self, seed: u64) -> Result<Built, ConfigError> {
        BUILT.fetch_add(1, Ordering::Relaxed);
        (self.model.build)(&self.config, seed)
    }

    /// The host model of the file (its `[host]` table).
    pub fn host(&self) -> HostParams {
        HostParams::of(&self.config)
    }

    /// A spec from (key, value) pairs, for tests and examples.
    pub fn from_pairs<K: Into<String>>(
        pairs: impl IntoIterator<Item = (K, Value)>,
    ) -> Result<Self, ConfigError> {
        Self::parse(&Value::table(pairs))
    }
}

/// One parameter as `describe` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDoc {
    /// Dotted key (`topology.k`; variant keys as `topology.k (kind = fat_tree)`).
    pub key: String,
    pub expected: String,
    /// The default as TOML would spell it; None when required.
    pub default: Option<String>,
    pub required: bool,
    pub doc: String,
}

/// The flattened parameter list of a model, shared keys first.
pub fn describe(model: &Model) -> Vec<ParamDoc> {
    let mut out = Vec::new();
    let mut groups: Vec<&[Param]> = vec![COMMON];
    groups.extend(model.params.iter().copied());
    for group in groups {
        flatten(group, "", "", &mut out);
    }
    out
}

fn flatten(params: &[Param], prefix: &str, note: &str, out: &mut Vec<ParamDoc>) {
    for p in params {
        let key = format!("{prefix}{}", p.key);
        let default = match p.default {
            DefaultValue::Required => None,
            DefaultValue::Absent => Some("(none)".to_string()),
            DefaultValue::Float(v) => Some(v.to_string()),
            DefaultValue::Int(v) => Some(v.to_string()),
            DefaultValue::Bool(v) => Some(v.to_string()),
            DefaultValue::Str(v) => Some(format!("{v:?}")),
            DefaultValue::Empty => match p.ty {
                Type::Table(_) => Some("{}".to_string()),
                _ => Some("[]".to_string()),
            },
        };
        out.push(ParamDoc {
            key: format!("{key}{note}"),
            expected: schema::expected(&p.ty),
            required: matches!(p.default, DefaultValue::Required),
            default,
            doc: p.doc.to_string(),
        });
        match p.ty {
            Type::Table(inner) | Type::TableList(inner) => {
                flatten(inner, &format!("{key}."), note, out)
            }
            Type::Variant(kinds) => {
                for (kind, inner) in kinds {
                    flatten(inner, &format!("{key}."), &format!(" (kind = {kind})"), out);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_has_a_unique_name_and_describes_its_keys() {
        let all = models();
        assert!(all.len() >= 3);
        for w in all.windows(2) {
            assert_ne!(w[0].name, w[1].name);
        }
        for m in all {
            let docs = describe(m);
            assert!(docs.iter().any(|d| d.key == "model" && d.required));
            assert!(docs.iter().all(|d| !d.doc.is_empty()), "{}", m.name);
        }
    }

    #[test]
    fn a_key_of_another_model_names_that_model() {
        let e = FabricSpec::from_pairs([
            ("model", Value::from("loggp")),
            ("alpha_us", Value::from(1.0)),
        ])
        .unwrap_err();
        assert_eq!(e.key, "alpha_us");
        assert!(e.message.contains("a key of model alpha_beta"), "{e}");
    }

    #[test]
    fn every_model_takes_the_host_table_and_top_level_host_keys_are_named_as_written() {
        for m in models() {
            let keys: Vec<String> = describe(m).into_iter().map(|d| d.key).collect();
            for p in host::HOST {
                assert!(keys.contains(&format!("host.{}", p.key)), "{}", m.name);
            }
        }
        let spec = |key: &str, v: f64| {
            FabricSpec::from_pairs([
                ("model", Value::from("loggp")),
                ("L_ns", Value::from(1.0)),
                (key, Value::from(v)),
            ])
        };
        assert_eq!(spec("o_ns", 7.0).unwrap().host().overhead_ns, 7.0);
        let e = spec("o_ns", -1.0).unwrap_err();
        assert_eq!(e.key, "o_ns");
        assert!(e.message.contains(">= 0"), "{e}");
        let e = spec("gamma_ns_per_byte", -1.0).unwrap_err();
        assert_eq!(e.key, "gamma_ns_per_byte");
    }

    #[test]
    fn unknown_and_missing_models_list_the_registered_ones() {
        let e = FabricSpec::from_pairs([("model", Value::from("ring"))]).unwrap_err();
        assert_eq!(e.key, "model");
        assert!(
            e.message.contains("alpha_beta") && e.message.contains("flow"),
            "{e}"
        );
        let e = FabricSpec::from_pairs::<&str>([]).unwrap_err();
        assert!(e.message.contains("is required"), "{e}");
    }
}
