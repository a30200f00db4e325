//! Fabric parameters, declared once per model and checked in one place.
//!
//! A model lists its [`Param`]s (key with the unit in its name, type, range, default, one
//! doc line). A configuration arrives as a [`Value`] tree (the binding converts the TOML
//! Python parsed); [`validate`] checks it against the declaration and fills defaults,
//! giving a [`Config`] whose typed getters cannot fail for declared keys. `describe` in
//! the registry prints the same declarations, so the documentation cannot drift from
//! what is accepted.

use std::collections::BTreeMap;
use std::fmt;

/// A configuration value (the TOML data model without dates).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Table(BTreeMap<String, Value>),
}

impl Value {
    /// A table from (key, value) pairs, for building configurations in code.
    pub fn table<K: Into<String>>(entries: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Table(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::List(_) => "a list",
            Value::Table(_) => "a table",
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Self {
        Value::List(v.into_iter().map(Into::into).collect())
    }
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy)]
pub enum Type {
    /// A number in [min, max] (integers are accepted).
    Float {
        min: f64,
        max: f64,
    },
    /// An integer in [min, max].
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    Str,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of numbers in [min, max] with a length in [len.0, len.1].
    FloatList {
        min: f64,
        max: f64,
        len: (usize, usize),
    },
    /// A list of integers in [min, max] with a length in [len.0, len.1].
    IntList {
        min: i64,
        max: i64,
        len: (usize, usize),
    },
    /// A nested table with its own parameters.
    Table(&'static [Param]),
    /// A list of tables (TOML `[[key]]`), each with these parameters.
    TableList(&'static [Param]),
    /// A table whose `kind` key picks which parameters the rest of it takes.
    Variant(&'static [(&'static str, &'static [Param])]),
}

/// A parameter's default.
#[derive(Debug, Clone, Copy)]
pub enum DefaultValue {
    /// The key must be given.
    Required,
    /// Optional with no value when absent (`Config::has` says whether it was given).
    Absent,
    Float(f64),
    Int(i64),
    Bool(bool),
    Str(&'static str),
    /// An empty list (of tables or values).
    Empty,
}

/// One declared parameter: its key carries its unit (`hop_latency_ns`).
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub key: &'static str,
    pub ty: Type,
    pub default: DefaultValue,
    pub doc: &'static str,
}

/// A value that does not fit the declaration: the dotted key and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key {}: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A validated table: every declared key with a value or default is present.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    values: BTreeMap<String, Value>,
}

impl Config {
    fn get(&self, key: &str) -> &Value {
        self.values
            .get(key)
            .unwrap_or_else(|| panic!("fabric parameter {key} is not declared with a default"))
    }

    pub fn f64(&self, key: &str) -> f64 {
        match self.get(key) {
            Value::Float(v) => *v,
            Value::Int(v) => *v as f64,
            other => panic!("parameter {key} is {other:?}, not a number"),
        }
    }

    pub fn i64(&self, key: &str) -> i64 {
        match self.get(key) {
            Value::Int(v) => *v,
            other => panic!("parameter {key} is {other:?}, not an integer"),
        }
    }

    /// An integer parameter declared with a range inside u32's.
    pub fn u32(&self, key: &str) -> u32 {
        u32::try_from(self.i64(key)).expect("declared range fits u32")
    }

    pub fn bool(&self, key: &str) -> bool {
        match self.get(key) {
            Value::Bool(v) => *v,
            other => panic!("parameter {key} is {other:?}, not a boolean"),
        }
    }

    pub fn str(&self, key: &str) -> &str {
        match self.get(key) {
            Value::Str(v) => v,
            other => panic!("parameter {key} is {other:?}, not a string"),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    pub fn f64s(&self, key: &str) -> Vec<f64> {
        self.list(key)
            .iter()
            .map(|v| match v {
                Value::Float(x) => *x,
                Value::Int(x) => *x as f64,
                other => panic!("list {key} holds {other:?}"),
            })
            .collect()
    }

    pub fn i64s(&self, key: &str) -> Vec<i64> {
        self.list(key)
            .iter()
            .map(|v| match v {
                Value::Int(x) => *x,
                other => panic!("list {key} holds {other:?}"),
            })
            .collect()
    }

    fn list(&self, key: &str) -> &[Value] {
        match self.get(key) {
            Value::List(v) => v,
            other => panic!("parameter {key} is {other:?}, not a list"),
        }
    }

    /// A nested table (`Type::Table` or `Type::Variant`, whose `kind` is then a key).
    pub fn table(&self, key: &str) -> Config {
        match self.get(key) {
            Value::Table(t) => Config { values: t.clone() },
            other => panic!("parameter {key} is {other:?}, not a table"),
        }
    }

    /// The tables of a `Type::TableList`.
    pub fn tables(&self, key: &str) -> Vec<Config> {
        self.list(key)
            .iter()
            .map(|v| match v {
                Value::Table(t) => Config { values: t.clone() },
                other => panic!("list {key} holds {other:?}"),
            })
            .collect()
    }
}

/// Checks `table` against `groups` of parameters (a model's own and shared ones); `prefix`
/// is the dotted path of the table for messages ("" at the top).
pub fn validate(
    table: &BTreeMap<String, Value>,
    groups: &[&[Param]],
    prefix: &str,
) -> Result<Config, ConfigError> {
    let params: Vec<&Param> = groups.iter().flat_map(|g| g.iter()).collect();
    let path = |key: &str| format!("{prefix}{key}");
    for key in table.keys() {
        if !params.iter().any(|p| p.key == key) {
            let allowed: Vec<&str> = params.iter().map(|p| p.key).collect();
            let mut message = format!("unknown key (allowed: {})", allowed.join(", "));
            if let Some(hint) = unit_hint(key, &allowed) {
                message += &format!("; units are part of the key: did you mean {hint}?");
            }
            return Err(ConfigError {
                key: path(key),
                message,
            });
        }
    }
    let mut values = BTreeMap::new();
    for p in params {
        let key = path(p.key);
        let value = match (table.get(p.key), p.default) {
            (Some(v), _) => check(v, &p.ty, &key)?,
            (None, DefaultValue::Required) => {
                let message = match p.ty {
                    Type::Table(_) | Type::Variant(_) => {
                        format!("a [{key}] table is required ({})", expected(&p.ty))
                    }
                    _ => format!("is required ({})", expected(&p.ty)),
                };
                return Err(ConfigError { key, message });
            }
            (None, DefaultValue::Absent) => continue,
            (None, DefaultValue::Float(v)) => Value::Float(v),
            (None, DefaultValue::Int(v)) => Value::Int(v),
            (None, DefaultValue::Bool(v)) => Value::Bool(v),
            (None, DefaultValue::Str(v)) => Value::Str(v.into()),
            (None, DefaultValue::Empty) => match p.ty {
                Type::Table(inner) => {
                    check(&Value::Table(BTreeMap::new()), &Type::Table(inner), &key)?
                }
                _ => Value::List(Vec::new()),
            },
        };
        values.insert(p.key.to_string(), value);
    }
    Ok(Config { values })
}

fn err(key: &str, message: String) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message,
    }
}

fn got(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("{s:?}"),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.type_name().to_string(),
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    }
}

/// What a type accepts, in words (for errors and `describe`).
pub fn expected(ty: &Type) -> String {
    let range_f = |min: f64, max: f64| match (min == f64::NEG_INFINITY, max == f64::INFINITY) {
        (true, true) => "any number".to_string(),
        (false, true) => format!("a number >= {min}"),
        (true, false) => format!("a number <= {max}"),
        (false, false) => format!("a number in [{min}, {max}]"),
    };
    let range_i = |min: i64, max: i64| match (min == i64::MIN, max == i64::MAX) {
        (true, true) => "any integer".to_string(),
        (false, true) => format!("an integer >= {min}"),
        (true, false) => format!("an integer <= {max}"),
        (false, false) => format!("an integer in [{min}, {max}]"),
    };
    let len = |l: (usize, usize)| match l {
        (a, b) if a == b => format!("{a} "),
        (0, usize::MAX) => String::new(),
        (a, usize::MAX) => format!("at least {a} "),
        (a, b) => format!("{a} to {b} "),
    };
    match *ty {
        Type::Float { min, max } => range_f(min, max),
        Type::Int { min, max } => range_i(min, max),
        Type::Bool => "true or false".into(),
        Type::Str => "a string".into(),
        Type::Choice(c) => format!("one of {}", c.join(", ")),
        Type::FloatList { min, max, len: l } => {
            format!("a list of {}numbers, each {}", len(l), range_f(min, max))
        }
        Type::IntList { min, max, len: l } => {
            format!("a list of {}integers, each {}", len(l), range_i(min, max))
        }
        Type::Table(_) => "a table".into(),
        Type::TableList(_) => "a list of tables ([[key]])".into(),
        Type::Variant(kinds) => {
            let names: Vec<&str> = kinds.iter().map(|k| k.0).collect();
            format!("a table with kind = one of {}", names.join(", "))
        }
    }
}

fn check(v: &Value, ty: &Type, key: &str) -> Result<Value, ConfigError> {
    let wrong = || err(key, format!("expected {}, got {}", expected(ty), got(v)));
    match *ty {
        Type::Float { min, max } => {
            let x = number(v).ok_or_else(wrong)?;
            if !(x.is_finite() && x >= min && x <= max) {
                return Err(wrong());
            }
            Ok(Value::Float(x))
        }
        Type::Int { min, max } => match v {
            Value::Int(i) if (min..=max).contains(i) => Ok(v.clone()),
            _ => Err(wrong()),
        },
        Type::Bool => match v {
            Value::Bool(_) => Ok(v.clone()),
            _ => Err(wrong()),
        },
        Type::Str => match v {
            Value::Str(_) => Ok(v.clone()),
            _ => Err(wrong()),
        },
        Type::Choice(allowed) => match v {
            Value::Str(s) if allowed.contains(&s.as_str()) => Ok(v.clone()),
            _ => Err(wrong()),
        },
        Type::FloatList { min, max, len } => {
            let Value::List(items) = v else {
                return Err(wrong());
            };
            if items.len() < len.0 || items.len() > len.1 {
                return Err(wrong());
            }
            for (i, item) in items.iter().enumerate() {
                let ok = number(item).is_some_and(|x| x.is_finite() && x >= min && x <= max);
                if !ok {
                    let message = format!("item {i}: expected {}, got {}", expected(ty), got(item));
                    return Err(err(key, message));
                }
            }
            Ok(Value::List(
                items
                    .iter()
                    .map(|x| Value::Float(number(x).expect("checked")))
                    .collect(),
            ))
        }
        Type::IntList { min, max, len } => {
            let Value::List(items) = v else {
                return Err(wrong());
            };
            if items.len() < len.0 || items.len() > len.1 {
                return Err(wrong());
            }
            for (i, item) in items.iter().enumerate() {
                if !matches!(item, Value::Int(x) if (min..=max).contains(x)) {
                    let message = format!("item {i}: expected {}, got {}", expected(ty), got(item));
                    return Err(err(key, message));
                }
            }
            Ok(v.clone())
        }
        Type::Table(params) => match v {
            Value::Table(t) => Ok(Value::Table(
                validate(t, &[params], &format!("{key}."))?.values,
            )),
            _ => Err(wrong()),
        },
        Type::TableList(params) => {
            let Value::List(items) = v else {
                return Err(wrong());
            };
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Value::Table(t) = item else {
                    return Err(err(
                        key,
                        format!("item {i}: expected a table, got {}", got(item)),
                    ));
                };
                out.push(Value::Table(
                    validate(t, &[params], &format!("{key}[{i}]."))?.values,
                ));
            }
            Ok(Value::List(out))
        }
        Type::Variant(kinds) => {
            let Value::Table(t) = v else {
                return Err(wrong());
            };
            let names: Vec<&str> = kinds.iter().map(|k| k.0).collect();
            let kind_key = format!("{key}.kind");
            let kind = match t.get("kind") {
                Some(Value::Str(s)) => s.as_str(),
                Some(other) => {
                    let m = format!("expected one of {}, got {}", names.join(", "), got(other));
                    return Err(err(&kind_key, m));
                }
                None => {
                    let m = format!("is required (one of {})", names.join(", "));
                    return Err(err(&kind_key, m));
                }
            };
            let Some((_, params)) = kinds.iter().find(|k| k.0 == kind) else {
                let m = format!("expected one of {}, got {kind:?}", names.join(", "));
                return Err(err(&kind_key, m));
            };
            let mut rest = t.clone();
            rest.remove("kind");
            let mut values = validate(&rest, &[params], &format!("{key}."))?.values;
            values.insert("kind".into(), Value::Str(kind.into()));
            Ok(Value::Table(values))
        }
    }
}

/// Unit words a key may end with (`link_bandwidth_gbps`, `gamma_ns_per_byte`).
const UNIT_WORDS: &[&str] = &[
    "s", "ms", "us", "ns", "ps", "gbps", "mbps", "kbps", "bps", "gbit", "mbit", "per", "byte",
    "bytes", "bit", "bits", "b", "kb", "kib", "mb", "mib", "gb", "gib", "pj", "nj", "mw", "w",
    "db", "dbm", "hz", "ghz", "nm", "um", "mm", "cm",
];

/// The stem of a key without its unit words.
fn stem(key: &str) -> &str {
    let mut end = key.len();
    while let Some(i) = key[..end].rfind('_') {
        if UNIT_WORDS.contains(&key[i + 1..end].to_ascii_lowercase().as_str()) {
            end = i;
        } else {
            break;
        }
    }
    &key[..end]
}

/// An allowed key with the same stem but another unit (a wrong unit is an unknown key).
fn unit_hint<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let s = stem(key);
    (s != key)
        .then(|| allowed.iter().copied().find(|a| stem(a) == s && *a != key))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INNER: &[Param] = &[Param {
        key: "k",
        ty: Type::Int { min: 2, max: 64 },
        default: DefaultValue::Required,
        doc: "radix",
    }];
    const PARAMS: &[Param] = &[
        Param {
            key: "link_bandwidth_gbps",
            ty: Type::Float {
                min: 1e-9,
                max: f64::INFINITY,
            },
            default: DefaultValue::Required,
            doc: "rate",
        },
        Param {
            key: "hop_latency_ns",
            ty: Type::Float {
                min: 0.0,
                max: f64::INFINITY,
            },
            default: DefaultValue::Float(0.0),
            doc: "latency",
        },
        Param {
            key: "routing",
            ty: Type::Choice(&["dmodk", "random"]),
            default: DefaultValue::Str("dmodk"),
            doc: "routing",
        },
        Param {
            key: "topology",
            ty: Type::Variant(&[("fat_tree", INNER), ("crossbar", &[])]),
            default: DefaultValue::Required,
            doc: "topology",
        },
        Param {
            key: "dims",
            ty: Type::IntList {
                min: 1,
                max: 1024,
                len: (3, 3),
            },
            default: DefaultValue::Absent,
            doc: "dims",
        },
    ];

    fn table(v: Value) -> BTreeMap<String, Value> {
        match v {
            Value::Table(t) => t,
            _ => unreachable!(),
        }
    }

    fn ok() -> Value {
        Value::table([
            ("link_bandwidth_gbps", Value::Int(100)),
            (
                "topology",
                Value::table([("kind", "fat_tree".into()), ("k", Value::Int(4))]),
            ),
        ])
    }

    #[test]
    fn defaults_are_filled_and_ints_widen_to_floats() {
        let c = validate(&table(ok()), &[PARAMS], "").unwrap();
        assert_eq!(c.f64("link_bandwidth_gbps"), 100.0);
        assert_eq!(c.f64("hop_latency_ns"), 0.0);
        assert_eq!(c.str("routing"), "dmodk");
        assert!(!c.has("dims"));
        let t = c.table("topology");
        assert_eq!((t.str("kind"), t.u32("k")), ("fat_tree", 4));
    }

    #[test]
    fn errors_name_the_dotted_key_and_what_is_allowed() {
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                Value::table([("topology", ok_topology())]),
                "link_bandwidth_gbps",
                "is required",
            ),
            (
                with(ok(), "link_bandwidth_mbps", Value::Int(3)),
                "link_bandwidth_mbps",
                "did you mean link_bandwidth_gbps",
            ),
            (
                with(ok(), "routing", "ecmp".into()),
                "routing",
                "one of dmodk, random",
            ),
            (
                with(ok(), "hop_latency_ns", Value::Float(-1.0)),
                "hop_latency_ns",
                ">= 0",
            ),
            (
                with(ok(), "dims", vec![1i64, 2].into()),
                "dims",
                "a list of 3 integers",
            ),
            (
                with(
                    ok(),
                    "topology",
                    Value::table([("kind", "fat_tree".into()), ("k", Value::Int(1))]),
                ),
                "topology.k",
                "[2, 64]",
            ),
            (
                with(ok(), "topology", Value::table([("kind", "ring".into())])),
                "topology.kind",
                "fat_tree, crossbar",
            ),
            (
                remove(ok(), "topology"),
                "topology",
                "a [topology] table is required",
            ),
        ];
        for (value, key, fragment) in cases {
            let e = validate(&table(value), &[PARAMS], "").unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(e.message.contains(fragment), "{e}");
        }
    }

    fn ok_topology() -> Value {
        Value::table([("kind", "crossbar".into())])
    }

    fn with(v: Value, key: &str, x: Value) -> Value {
        let mut t = table(v);
        t.insert(key.into(), x);
        Value::Table(t)
    }

    fn remove(v: Value, key: &str) -> Value {
        let mut t = table(v);
        t.remove(key);
        Value::Table(t)
    }

    #[test]
    fn stems_drop_unit_words_only() {
        assert_eq!(stem("gamma_ns_per_byte"), "gamma");
        assert_eq!(stem("link_bandwidth_gbps"), "link_bandwidth");
        assert_eq!(stem("routing"), "routing");
        assert_eq!(
            unit_hint("alpha_ns", &["alpha_us", "beta_ns_per_byte"]),
            Some("alpha_us")
        );
        assert_eq!(unit_hint("bandwidth", &["link_bandwidth_gbps"]), None);
    }
}
