//! Speed of the packet engine: uniform random traffic of single-packet messages, Poisson
//! arrivals at LOAD of every endpoint's injection rate, on a bundled fabric switched to
//! `contention = "packet"`; prints packet-hops per CPU-second (issue 39's bench figure).
//!
//! cargo run --profile demo -p replay-engine --example packet_speed -- FABRIC LOAD US
//!     [SEED] [BUFFER_BYTES]
//! (FABRIC: a file of src/tailcast/replay/fabrics without .toml, e.g. dfp-8k; US:
//! simulated microseconds of traffic; BUFFER_BYTES: packet.buffer_bytes, default the
//! declared one)

use replay_engine::fabric::schema::Value;
use replay_engine::fabric::{Delivery, Fabric, Kind, Transfer};
use replay_engine::prng::SplitMix64;
use replay_engine::FabricSpec;

fn from_toml(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Array(a) => Value::List(a.iter().map(from_toml).collect()),
        toml::Value::Table(t) => Value::table(t.iter().map(|(k, v)| (k.clone(), from_toml(v)))),
        toml::Value::Datetime(d) => Value::Str(d.to_string()),
    }
}

/// CPU seconds of this process.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// FNV-1a over the deliveries' ids, instants and waits (bits), in delivery order.
struct Digest(u64);

impl Digest {
    fn add(&mut self, out: &[Delivery]) {
        for d in out {
            for word in [u64::from(d.id), d.at.to_bits(), d.info.wait_ns.to_bits()] {
                for byte in word.to_le_bytes() {
                    self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("dfp-8k", String::as_str);
    let load: f64 = args.get(2).map_or(0.5, |a| a.parse().expect("LOAD"));
    let horizon = args.get(3).map_or(50.0, |a| a.parse::<f64>().expect("US")) * 1e3;
    let seed: u64 = args.get(4).map_or(1, |a| a.parse().expect("SEED"));
    let path = format!(
        "{}/../../src/tailcast/replay/fabrics/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("fabric file");
    let Value::Table(mut table) = from_toml(&toml::from_str(&text).expect("TOML")) else {
        unreachable!()
    };
    table.insert("contention".into(), Value::from("packet"));
    if let Some(b) = args.get(5) {
        let bytes = Value::Int(b.parse().expect("BUFFER_BYTES"));
        table.insert("packet".into(), Value::table([("buffer_bytes", bytes)]));
    }
    let packet_bytes = match table.get("packet_bytes") {
        Some(Value::Int(b)) => *b as u64,
        _ => 1024,
    };
    let spec = FabricSpec::parse(&Value::Table(table)).expect("fabric");
    let mut f: Box<dyn Fabric> = spec.build(seed).expect("builds").fabric;
    let n = f.endpoints().expect("a topology");
    // Superposed Poisson arrivals of every endpoint: total rate n × load × rate / packet.
    let per_ns = f64::from(n) * load * f.injection_rate(0) / packet_bytes as f64;
    let mut rng = SplitMix64::new(seed);
    let uniform =
        |rng: &mut SplitMix64| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let (mut now, mut id, mut delivered) = (0.0, 0u32, 0u64);
    let mut digest = Digest(0xcbf2_9ce4_8422_2325);
    let mut out = Vec::new();
    let start = cpu_seconds();
    while now < horizon {
        now += -uniform(&mut rng).ln() / per_ns;
        while let Some(t) = f.next_time().filter(|&t| t <= now) {
            f.advance(t, &mut out);
        }
        delivered += out.len() as u64;
        digest.add(&out);
        out.clear();
        let src = rng.below(u64::from(n)) as u32;
        let mut dst = rng.below(u64::from(n - 1)) as u32;
        if dst >= src {
            dst += 1;
        }
        f.submit(now, &Transfer::new(id, src, dst, packet_bytes, Kind::Eager));
        id = id.wrapping_add(1);
    }
    // Accepted load: what was delivered by the horizon, of what was offered.
    let (offered, accepted) = (id, delivered);
    while let Some(t) = f.next_time() {
        f.advance(t, &mut out);
    }
    delivered += out.len() as u64;
    digest.add(&out);
    let cpu = cpu_seconds() - start;
    let mut stats = Vec::new();
    f.stats(now, &mut stats);
    let get = |k: &str| stats.iter().find(|s| s.0 == k).map_or(0.0, |s| s.1);
    let hops = get("packet_hops");
    println!(
        "{name}: {n} endpoints, load {load}, {:.0} µs: {delivered} packets delivered, {hops:.0} packet-hops in {cpu:.2} CPU-s = {:.2} M packet-hops per CPU-s",
        now / 1e3,
        hops / cpu / 1e6
    );
    println!(
        "  delivered by the horizon: {accepted} of {offered} ({:.3} of the offered load)",
        accepted as f64 / f64::from(offered)
    );
    println!("  delivery digest = {:016x}", digest.0);
    for (k, v) in &stats {
        println!("  {k} = {v}");
    }
}
