//! Both `squeue --json` shapes: real Slurm 22.05.8 output (tests/data/slurm-22.05) and the
//! 23.02+ shape (state lists, `{"set", "infinite", "number"}` objects), plus escapes,
//! duplicate keys, meta and the per-job problems.

use queue_scan::{scan, ProblemKind, Scan};

fn recorded(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/data/slurm-22.05/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn ok(doc: &str) -> Scan {
    scan(doc.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{doc}"))
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn slurm_22_05_mix_file() {
    let s = scan(&recorded("squeue-mix.json")).unwrap();
    let jobs = &s.jobs;
    assert_eq!(jobs.len(), 14);
    assert_eq!(jobs.job_id, (1..=14).map(Some).collect::<Vec<_>>());
    assert_eq!(jobs.job_state[0], strings(&["COMPLETED"]));
    assert_eq!(jobs.job_state[9], strings(&["PENDING"]));
    assert_eq!(jobs.nodes[0].as_deref(), Some("node[01-04]"));
    assert_eq!(jobs.nodes[4].as_deref(), Some("node[01-02]"));
    assert_eq!(jobs.nodes[9], None); // pending: "" in 22.05
    assert_eq!(jobs.node_count[7], Some(6));
    assert_eq!(jobs.array_job_id[0], Some(0));
    assert_eq!(jobs.array_task_id[0], None); // null
    assert_eq!(jobs.user_name[0].as_deref(), Some("root"));
    assert_eq!(jobs.user_id[0], Some(0));
    assert_eq!(s.release.as_deref(), Some("22.05.8"));
    assert_eq!(s.cluster.as_deref(), Some("lab")); // no meta cluster in 22.05: first job's
    assert!(s.problems.is_empty() && s.errors.is_empty());
}

#[test]
fn slurm_22_05_running_file() {
    let s = scan(&recorded("squeue1.json")).unwrap();
    assert_eq!(s.jobs.len(), 8);
    assert_eq!(s.jobs.nodes[6].as_deref(), Some("node[08-09,11-16]"));
    assert!(s
        .jobs
        .job_state
        .iter()
        .all(|st| st == &strings(&["RUNNING"])));
}

const NEWER: &str = r#"{
  "jobs": [
    {"job_id": 7, "job_state": ["running", "COMPLETING"], "nodes": "n[1-2]",
     "node_count": {"set": true, "infinite": false, "number": 2},
     "array_job_id": {"set": true, "infinite": false, "number": 5},
     "array_task_id": {"set": true, "infinite": false, "number": 3},
     "user_name": "alice", "user_id": {"set": true, "infinite": false, "number": 1000},
     "cluster": "big"},
    {"job_id": 8, "job_state": ["PENDING"], "nodes": "",
     "node_count": {"set": false, "infinite": false, "number": 0},
     "array_task_id": {"set": true, "infinite": true, "number": 9},
     "user_id": 12}
  ],
  "meta": {"slurm": {"release": "23.11.4", "cluster": "lab"}},
  "warnings": [], "errors": []
}"#;

#[test]
fn newer_shape_lists_and_number_objects() {
    let s = ok(NEWER);
    let j = &s.jobs;
    assert_eq!(j.job_id, vec![Some(7), Some(8)]);
    assert_eq!(j.job_state[0], strings(&["RUNNING", "COMPLETING"]));
    assert_eq!(j.node_count, vec![Some(2), None]); // set: false
    assert_eq!(j.array_job_id, vec![Some(5), None]);
    assert_eq!(j.array_task_id, vec![Some(3), None]); // infinite
    assert_eq!(j.user_name, vec![Some("alice".into()), None]);
    assert_eq!(j.user_id, vec![Some(1000), Some(12)]);
    assert_eq!(j.nodes, vec![Some("n[1-2]".into()), None]);
    assert_eq!(s.release.as_deref(), Some("23.11.4"));
    assert_eq!(s.cluster.as_deref(), Some("lab")); // meta wins over the first job's
}

#[test]
fn escapes_in_extracted_strings_and_keys() {
    let s = ok(
        r#"{"jobs": [{"job\u005fid": 1, "nodes": "n\/x\u0041\ud83d\ude00",
        "user_name": "a\"b\\c\u00e9", "command": "\/bin\/sh \"x\" \t\u2028"}]}"#,
    );
    assert_eq!(s.jobs.job_id, vec![Some(1)]);
    assert_eq!(s.jobs.nodes[0].as_deref(), Some("n/xA😀"));
    assert_eq!(s.jobs.user_name[0].as_deref(), Some("a\"b\\cé"));
}

#[test]
fn numbers_as_strings_floats_and_duplicates() {
    let s = ok(
        r#"{"jobs": [{"job_id": " 42 ", "node_count": 3, "node_count": 4},
        {"job_id": 5, "node_count": true, "array_job_id": null}]}"#,
    );
    assert_eq!(s.jobs.job_id, vec![Some(42), Some(5)]);
    assert_eq!(s.jobs.node_count, vec![Some(4), None]); // last duplicate wins; bool: none
    assert!(s.problems.is_empty());
}

#[test]
fn bad_entries_become_problems_in_order() {
    let s = ok(r#"{"jobs": [
        {"job_id": 1, "job_state": "RUNNING"},
        [1, 2],
        {"nodes": "n1"},
        {"job_id": {"set": false, "infinite": false, "number": 0}},
        {"job_id": 1.5},
        {"job_id": 6, "job_state": [1], "nodes": 7},
        {"job_id": 7, "nodes": {"a": 1}},
        {"job_id": 8, "node_count": "many", "nodes": 0}
    ]}"#);
    let kinds: Vec<(usize, String)> = s
        .problems
        .iter()
        .map(|p| (p.index, p.kind.to_string()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (1, "job entry is not an object: [1, 2]".to_string()),
            (2, "job entry has no job_id".into()),
            (3, "job_id is not set".into()),
            (4, "job_id: expected a number, got 1.5".into()),
            (
                5,
                "job_state must be a string or a list of strings, got [1]".into()
            ),
            (6, r#"nodes must be a hostlist string, got {"a": 1}"#.into()),
            (7, r#"node_count: expected a number, got "many""#.into()),
        ]
    );
    assert_eq!(s.jobs.len(), 8); // columns stay aligned with `jobs`
    assert_eq!(s.problems[1].kind, ProblemKind::NoJobId);
    assert_eq!(
        s.problems.iter().map(|p| p.line).collect::<Vec<_>>(),
        (3..=9).collect::<Vec<_>>()
    );
    assert_eq!(s.jobs.nodes[7], None); // 0 is falsy, as `raw.get("nodes") or ""`
}

#[test]
fn top_level_errors_and_meta_spellings() {
    let s = ok(
        r#"{"errors": [{"error": "x", "error_number": 2}, "y"], "jobs": [],
        "meta": {"Slurm": {"release": "24.05.1"}, "slurm": {"release": "no"}}}"#,
    );
    assert_eq!(
        s.errors,
        vec![r#"{"error": "x", "error_number": 2}"#, r#""y""#]
    );
    assert_eq!(s.release.as_deref(), Some("24.05.1"));
    assert_eq!(s.cluster, None);
    let s = ok(
        r#"{"meta": {"Slurm": {}, "slurm": {"release": "23.02.7"}}, "jobs": [],
        "errors": ""}"#,
    );
    assert_eq!(s.release.as_deref(), Some("23.02.7")); // empty `Slurm` is falsy
    assert!(s.errors.is_empty());
}

#[test]
fn a_second_jobs_member_replaces_the_first() {
    let s = ok(r#"{"jobs": [{"job_id": 1}, 5], "jobs": [{"job_id": 2}]}"#);
    assert_eq!(s.jobs.job_id, vec![Some(2)]);
    assert!(s.problems.is_empty());
}
