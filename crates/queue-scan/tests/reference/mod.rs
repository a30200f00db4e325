//! A deliberately plain second implementation for the property tests: a recursive-descent
//! JSON parser into a tree with byte spans, and the squeue field rules restated on the tree
//! (as the Python reader applied them to `json.loads` output).

use queue_scan::{Columns, Problem, ProblemKind, Scan};

mod json;

pub use json::parse;
use json::{Node, V};

fn last<'a>(members: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

fn truthy(n: &Node) -> bool {
    match &n.v {
        V::Null | V::Bool(false) => false,
        V::Bool(true) => true,
        V::Num(t) => t.parse::<f64>().unwrap() != 0.0,
        V::Str(s) => !s.is_empty(),
        V::Arr(a) => !a.is_empty(),
        V::Obj(o) => !o.is_empty(),
    }
}

fn shown(b: &[u8], n: &Node) -> String {
    let text = String::from_utf8_lossy(&b[n.start..n.end]).into_owned();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn nonempty_str(n: Option<&Node>) -> Option<String> {
    match n.map(|n| &n.v) {
        Some(V::Str(x)) if !x.is_empty() => Some(x.clone()),
        _ => None,
    }
}

enum Num {
    Absent,
    Unset,
    Int(i64),
    Bad(String),
}

fn int(t: &str) -> Option<i64> {
    if t.contains(['.', 'e', 'E']) {
        None
    } else {
        t.parse().ok()
    }
}

/// Python's `_number`: plain ints, digit strings, `{"set", "infinite", "number"}`.
fn num(b: &[u8], n: Option<&Node>) -> Num {
    let Some(n) = n else { return Num::Absent };
    let bad = || Num::Bad(shown(b, n));
    match &n.v {
        V::Null | V::Bool(_) => Num::Unset,
        V::Num(t) => int(t).map_or_else(bad, Num::Int),
        V::Str(s) => {
            let d = s.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
            let ok = !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit());
            ok.then(|| d.parse().ok())
                .flatten()
                .map_or_else(bad, Num::Int)
        }
        V::Obj(o) => {
            let unset = matches!(last(o, "set").map(|n| &n.v), Some(V::Bool(false)));
            if unset || last(o, "infinite").is_some_and(truthy) {
                return Num::Unset;
            }
            match last(o, "number").map(|n| &n.v) {
                Some(V::Num(t)) => int(t).map_or(Num::Unset, Num::Int),
                _ => Num::Unset,
            }
        }
        V::Arr(_) => bad(),
    }
}

/// The scan the Python rules give for `doc`, or `Err` when it is not squeue output.
pub fn expected(b: &[u8], doc: &Node) -> Result<Scan, ()> {
    let V::Obj(top) = &doc.v else { return Err(()) };
    let Some(Node {
        v: V::Arr(entries), ..
    }) = last(top, "jobs")
    else {
        return Err(());
    };
    let mut s = Scan::default();
    let meta_field = |key: &str| -> Option<String> {
        let Some(Node {
            v: V::Obj(meta), ..
        }) = last(top, "meta")
        else {
            return None;
        };
        let chosen = match last(meta, "Slurm") {
            Some(n) if truthy(n) => n,
            _ => last(meta, "slurm")?,
        };
        let V::Obj(slurm) = &chosen.v else {
            return None;
        };
        nonempty_str(last(slurm, key))
    };
    s.release = meta_field("release");
    s.cluster = meta_field("cluster").or_else(|| match entries.first().map(|n| &n.v) {
        Some(V::Obj(job)) => nonempty_str(last(job, "cluster")),
        _ => None,
    });
    let text = |n: &Node| String::from_utf8_lossy(&b[n.start..n.end]).into_owned();
    s.errors = match last(top, "errors") {
        Some(Node {
            v: V::Arr(items), ..
        }) => items.iter().map(text).collect(),
        Some(n) if truthy(n) => vec![text(n)],
        _ => Vec::new(),
    };
    for (index, entry) in entries.iter().enumerate() {
        let (row, problem) = job(b, entry);
        push(&mut s.jobs, row);
        if let Some(kind) = problem {
            s.problems.push(Problem {
                index,
                offset: entry.start,
                line: 1 + b[..entry.start].iter().filter(|&&c| c == b'\n').count(),
                kind,
            });
        }
    }
    Ok(s)
}

#[derive(Default)]
struct Row {
    job_id: Option<i64>,
    array_job_id: Option<i64>,
    array_task_id: Option<i64>,
    job_state: Vec<String>,
    nodes: Option<String>,
    node_count: Option<i64>,
    user_name: Option<String>,
    user_id: Option<i64>,
}

fn push(c: &mut Columns, r: Row) {
    c.job_id.push(r.job_id);
    c.array_job_id.push(r.array_job_id);
    c.array_task_id.push(r.array_task_id);
    c.job_state.push(r.job_state);
    c.nodes.push(r.nodes);
    c.node_count.push(r.node_count);
    c.user_name.push(r.user_name);
    c.user_id.push(r.user_id);
}

fn take(field: &'static str, n: Num, problem: &mut Option<ProblemKind>) -> Option<i64> {
    match n {
        Num::Int(v) => Some(v),
        Num::Bad(text) => {
            problem.get_or_insert(ProblemKind::NotANumber { field, text });
            None
        }
        _ => None,
    }
}

fn states(b: &[u8], n: Option<&Node>, problem: &mut Option<ProblemKind>) -> Vec<String> {
    let strings = match n.map(|n| &n.v) {
        None => Some(vec![]),
        Some(V::Str(s)) if s.is_empty() => Some(vec![]),
        Some(V::Str(s)) => Some(vec![s.to_uppercase()]),
        Some(V::Arr(items)) => items
            .iter()
            .map(|i| match &i.v {
                V::Str(s) => Some(s.to_uppercase()),
                _ => None,
            })
            .collect(),
        Some(_) => None,
    };
    strings.unwrap_or_else(|| {
        let text = shown(b, n.unwrap());
        problem.get_or_insert(ProblemKind::BadState { text });
        vec![]
    })
}

/// One entry of `jobs`, in the order the Python reader checked its fields.
fn job(b: &[u8], entry: &Node) -> (Row, Option<ProblemKind>) {
    let V::Obj(o) = &entry.v else {
        let text = shown(b, entry);
        return (Row::default(), Some(ProblemKind::NotAnObject { text }));
    };
    let mut problem = None;
    let job_id = match num(b, last(o, "job_id")) {
        Num::Absent => problem.replace(ProblemKind::NoJobId).and(None),
        Num::Unset => problem.replace(ProblemKind::JobIdNotSet).and(None),
        n => take("job_id", n, &mut problem),
    };
    let array_job_id = take(
        "array_job_id",
        num(b, last(o, "array_job_id")),
        &mut problem,
    );
    let array_task_id = take(
        "array_task_id",
        num(b, last(o, "array_task_id")),
        &mut problem,
    );
    let job_state = states(b, last(o, "job_state"), &mut problem);
    let nodes = match last(o, "nodes") {
        Some(Node { v: V::Str(s), .. }) if !s.is_empty() => Some(s.clone()),
        Some(n) if !matches!(n.v, V::Str(_)) && truthy(n) => {
            let text = shown(b, n);
            problem.get_or_insert(ProblemKind::NodesNotString { text });
            None
        }
        _ => None,
    };
    let node_count = take("node_count", num(b, last(o, "node_count")), &mut problem);
    let user_name = match last(o, "user_name") {
        Some(Node { v: V::Str(s), .. }) => Some(s.clone()),
        Some(n) if truthy(n) => Some(shown(b, n)),
        _ => None,
    };
    let user_id = match num(b, last(o, "user_id")) {
        Num::Int(v) => Some(v),
        _ => None,
    };
    let row = Row {
        job_id,
        array_job_id,
        array_task_id,
        job_state,
        nodes,
        node_count,
        user_name,
        user_id,
    };
    (row, problem)
}
