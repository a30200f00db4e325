//! The fabric registry with the toy fixture model (`fixture-fabrics` feature): a model is
//! found, described and run from its own module alone, and a fabric that carries the
//! rendezvous control messages itself delays the handshake by what it takes.

mod fabric_support;

use fabric_support::from_toml;
use replay_engine::fabric::registry::{self, FabricSpec};
use replay_engine::fabric::schema::Value;
use replay_engine::ops::Op;
use replay_engine::trace::{TraceColumns, SAME};
use replay_engine::{replay, JobInput, Placement, ReplayOptions};

fn toy(setup_ns: f64) -> FabricSpec {
    FabricSpec::from_pairs([
        ("model", Value::from("toy_delay")),
        ("setup_ns", Value::from(setup_ns)),
        ("rate_gbps", Value::from(8.0)), // 1 byte per ns
    ])
    .expect("toy fabric")
}

#[test]
fn the_fixture_models_toml_loads_and_builds() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/fabrics/toy_delay.toml"
    );
    let text = std::fs::read_to_string(path).expect("fixture TOML");
    let doc: toml::Value = toml::from_str(&text).expect("valid TOML");
    let spec = FabricSpec::parse(&from_toml(&doc)).expect("valid fabric");
    assert_eq!(spec.model.name, "toy_delay");
    let built = spec.build(0).expect("builds");
    assert_eq!(built.fabric.endpoints(), Some(16));
}

#[test]
fn the_fixture_model_is_registered_and_described_from_its_file_alone() {
    let model = registry::find("toy_delay").expect("registered by build.rs");
    let docs = registry::describe(model);
    let keys: Vec<&str> = docs.iter().map(|d| d.key.as_str()).collect();
    // Its own keys after the common ones, among which the host model's: a model file
    // declares nothing of the host and still takes a [host] table.
    assert_eq!(&keys[keys.len() - 3..], ["setup_ns", "rate_gbps", "ports"]);
    assert!(keys.contains(&"host.eager_threshold_bytes"));
    assert!(docs.iter().any(|d| d.key == "rate_gbps" && d.required));
    let e = FabricSpec::from_pairs([("model", Value::from("toy_delay"))]).unwrap_err();
    assert_eq!(e.key, "rate_gbps");
}

/// Rank 0 sends `bytes` to rank 1; both post at time 0.
fn send(bytes: i64) -> f64 {
    let rank = [0u32, 1];
    let seq = [0i64, 0];
    let op = [Op::Send as u8, Op::Recv as u8];
    let peer = [1i32, 0];
    let minus = [-1i32, -1];
    let b = [bytes, bytes];
    let zero32 = [0i32, 0];
    let req = [-1i64, -1];
    let t = [0i64, 0];
    let same = [SAME, SAME];
    let cols = TraceColumns {
        rank: &rank,
        seq: &seq,
        op: &op,
        peer: &peer,
        root: &minus,
        send_bytes: &b,
        recv_bytes: &b,
        tag: &zero32,
        comm: &zero32,
        request: &req,
        t_start_ns: &t,
        t_end_ns: &t,
        iteration: &minus,
        recv_peer: &same,
        recv_tag: &same,
        ..TraceColumns::default()
    };
    let job = JobInput {
        columns: cols,
        placement: Placement::Linear { offset: 0 },
        foreground: true,
    };
    let out = replay(&[job], Vec::new(), &toy(100.0), &ReplayOptions::default()).expect("replay");
    let m = out
        .messages
        .expect("the toy reports transfers, so messages are recorded");
    assert_eq!(m.len(), 1);
    assert_eq!(m.setup_ns[0], 100.0);
    assert_eq!(out.path_classes, ["data", "control"]);
    assert!(out.fabric_stats.iter().any(|(k, _)| k == "toy_delivered"));
    out.jobs[0].total_time_ns
}

#[test]
fn control_messages_travel_through_the_fabric() {
    // Eager: setup + 1000 B at 1 B/ns.
    assert_eq!(send(1000), 100.0 + 1000.0);
    // Rendezvous: RTS and CTS each take the toy's setup before the data does.
    assert_eq!(send(100_000), 3.0 * 100.0 + 100_000.0);
}
