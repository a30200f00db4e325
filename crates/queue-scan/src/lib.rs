//! queue-scan: one validating pass over `squeue --json` output that extracts only the
//! fields a queue snapshot needs, as columns, and skips everything else without building it.
//!
//! A 100,000-job Slurm 22.05 queue is ~300 MB of pretty-printed JSON with ~110 members per
//! job, of which 8 are read. Shapes accepted (see the Python caller,
//! `tailcast.collectors.squeue`):
//! - 22.05 (openapi v0.0.38): `job_state` a string, numbers plain (`array_task_id` null);
//! - 23.02 and newer: `job_state` a list, numbers `{"set", "infinite", "number"}` objects.
//!
//! The whole document is validated as JSON (escapes, surrogate pairs, numbers, literals,
//! nesting); UTF-8 is checked in the strings that are extracted only. Syntax and shape
//! errors stop the scan ([`Error`], with byte offset and line); a job entry of the wrong
//! type is a [`Problem`] of that job, reported with the columns.

mod block;
mod cursor;
mod error;
mod escape;
mod values;

pub use error::{Error, ErrorKind};

use cursor::Cursor;
use error::{fault, Res};
use values::{array, number, object, raw, scalar, shown, states, string, Num, Scalar};

/// Deepest nesting of containers inside one skipped value.
pub const MAX_DEPTH: usize = 1024;

/// The extracted fields, one entry per job (index = position in `jobs`). `None` means
/// absent, null, or (for numbers) unset/infinite/boolean.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    pub job_id: Vec<Option<i64>>,
    pub array_job_id: Vec<Option<i64>>,
    pub array_task_id: Vec<Option<i64>>,
    /// Upper-cased; `[]` when absent or the empty string.
    pub job_state: Vec<Vec<String>>,
    /// The hostlist expression; `None` also for `""` and other falsy values.
    pub nodes: Vec<Option<String>>,
    pub node_count: Vec<Option<i64>>,
    /// Strings as they are; other non-null values as their JSON text.
    pub user_name: Vec<Option<String>>,
    /// `None` also when not a number.
    pub user_id: Vec<Option<i64>>,
}

impl Columns {
    pub fn len(&self) -> usize {
        self.job_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.job_id.is_empty()
    }
}

/// Why one job entry cannot be used (its columns hold `None`s where it failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    NotAnObject { text: String },
    NoJobId,
    JobIdNotSet,
    NotANumber { field: &'static str, text: String },
    BadState { text: String },
    NodesNotString { text: String },
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAnObject { text } => write!(f, "job entry is not an object: {text}"),
            Self::NoJobId => f.write_str("job entry has no job_id"),
            Self::JobIdNotSet => f.write_str("job_id is not set"),
            Self::NotANumber { field, text } => write!(f, "{field}: expected a number, got {text}"),
            Self::BadState { text } => {
                write!(
                    f,
                    "job_state must be a string or a list of strings, got {text}"
                )
            }
            Self::NodesNotString { text } => {
                write!(f, "nodes must be a hostlist string, got {text}")
            }
        }
    }
}

/// The first problem of one job entry; `offset` and `line` (1-based) are where the entry
/// starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub index: usize,
    pub offset: usize,
    pub line: usize,
    pub kind: ProblemKind,
}

/// Everything a scan extracts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    pub jobs: Columns,
    /// Job entries that cannot be used, in order.
    pub problems: Vec<Problem>,
    /// `meta.Slurm.release` (or `meta.slurm.release`), when a non-empty string.
    pub release: Option<String>,
    /// `meta.Slurm.cluster`, else the first job's `cluster`, when non-empty.
    pub cluster: Option<String>,
    /// The top-level `errors`: the JSON text of each element (of the value itself when
    /// it is truthy but not a list).
    pub errors: Vec<String>,
}

/// Scans `squeue --json` output.
pub fn scan(data: &[u8]) -> Result<Scan, Error> {
    let mut c = Cursor::new(data);
    let mut out = document(&mut c).map_err(|f| Error::at(f.kind, data, f.offset))?;
    locate(data, &mut out.problems);
    Ok(out)
}

/// Sets the line of each problem: one pass up to the last one (offsets increase).
fn locate(data: &[u8], problems: &mut [Problem]) {
    let (mut line, mut counted) = (1, 0);
    for p in problems {
        line += data[counted..p.offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        (p.line, counted) = (line, p.offset);
    }
}

fn document(c: &mut Cursor<'_>) -> Res<Scan> {
    let mut out = Scan::default();
    let mut first_job_cluster = None;
    let mut meta = Meta::default();
    let mut saw_jobs = false;
    if c.next_token()? != b'{' {
        let at = c.pos;
        c.skip_value()?;
        return fault(ErrorKind::TopNotObject, at);
    }
    object(c, |c, key| {
        match key {
            b"jobs" => {
                if c.next_token()? != b'[' {
                    return fault(ErrorKind::JobsNotArray, c.pos);
                }
                (out.jobs, out.problems, saw_jobs) = (Columns::default(), Vec::new(), true);
                first_job_cluster = None;
                array(c, |c, index| {
                    job(c, index, &mut out, &mut first_job_cluster)
                })?;
            }
            b"meta" if c.next_token()? == b'{' => meta = read_meta(c)?,
            b"meta" => {
                meta = Meta::default(); // `doc.get("meta") or {}`: not an object, no meta
                c.skip_value()?;
            }
            b"errors" => out.errors = errors(c)?,
            _ => c.skip_value()?,
        }
        Ok(())
    })?;
    let end = c.pos;
    c.ws();
    if c.pos < c.data.len() {
        return fault(ErrorKind::TrailingData, c.pos);
    }
    if !saw_jobs {
        return fault(ErrorKind::NoJobs, end.saturating_sub(1));
    }
    let slurm = if meta.upper_nonempty {
        meta.upper
    } else {
        meta.lower
    };
    out.release = slurm.release;
    out.cluster = slurm.cluster.or(first_job_cluster);
    Ok(out)
}

/// `release` and `cluster` of one `meta.Slurm`/`meta.slurm` object.
#[derive(Default)]
struct SlurmMeta {
    release: Option<String>,
    cluster: Option<String>,
}

/// Both spellings: `Slurm` wins when it is a non-empty object (Python's `a or b`).
#[derive(Default)]
struct Meta {
    upper: SlurmMeta,
    upper_nonempty: bool,
    lower: SlurmMeta,
}

fn read_meta(c: &mut Cursor<'_>) -> Res<Meta> {
    let mut meta = Meta::default();
    object(c, |c, key| {
        if !matches!(key, b"Slurm" | b"slurm") {
            return c.skip_value();
        }
        let (slurm, truthy) = if c.next_token()? == b'{' {
            read_slurm(c)?
        } else {
            let (_, _, truthy) = raw(c)?;
            (SlurmMeta::default(), truthy)
        };
        if key == b"Slurm" {
            (meta.upper, meta.upper_nonempty) = (slurm, truthy);
        } else {
            meta.lower = slurm;
        }
        Ok(())
    })?;
    Ok(meta)
}

/// The `Slurm` object's release and cluster (non-empty strings), and whether it has members.
fn read_slurm(c: &mut Cursor<'_>) -> Res<(SlurmMeta, bool)> {
    let mut slurm = SlurmMeta::default();
    let mut members = 0;
    object(c, |c, key| {
        members += 1;
        let value = match scalar(c)? {
            Scalar::Str(s) if !s.is_empty() => Some(s),
            _ => None,
        };
        match key {
            b"release" => slurm.release = value,
            b"cluster" => slurm.cluster = value,
            _ => {}
        }
        Ok(())
    })?;
    Ok((slurm, members > 0))
}

fn errors(c: &mut Cursor<'_>) -> Res<Vec<String>> {
    let text = |c: &Cursor<'_>, start, end| String::from_utf8_lossy(&c.data[start..end]).into();
    if c.next_token()? != b'[' {
        let (start, end, truthy) = raw(c)?;
        return Ok(if truthy {
            vec![text(c, start, end)]
        } else {
            Vec::new()
        });
    }
    let mut all = Vec::new();
    array(c, |c, _| {
        let (start, end, _) = raw(c)?;
        all.push(text(c, start, end));
        Ok(())
    })?;
    Ok(all)
}

/// One job's fields as read (`None`: absent). Duplicate keys: the last one wins.
#[derive(Default)]
struct JobFields {
    job_id: Option<Num>,
    array_job_id: Option<Num>,
    array_task_id: Option<Num>,
    job_state: Option<Result<Vec<String>, String>>,
    nodes: Option<Scalar>,
    node_count: Option<Num>,
    user_name: Option<Scalar>,
    user_id: Option<Num>,
}

fn job(
    c: &mut Cursor<'_>,
    index: usize,
    out: &mut Scan,
    first_cluster: &mut Option<String>,
) -> Res<()> {
    let first = c.next_token()?;
    let start = c.pos;
    let mut f = JobFields::default();
    if first == b'{' {
        object(c, |c, key| {
            match key {
                b"job_id" => f.job_id = Some(number(c)?),
                b"array_job_id" => f.array_job_id = Some(number(c)?),
                b"array_task_id" => f.array_task_id = Some(number(c)?),
                b"job_state" => f.job_state = Some(states(c)?),
                b"nodes" => f.nodes = Some(scalar(c)?),
                b"node_count" => f.node_count = Some(number(c)?),
                b"user_name" => f.user_name = Some(scalar(c)?),
                b"user_id" => f.user_id = Some(number(c)?),
                b"cluster" if index == 0 => {
                    *first_cluster = match c.next_token()? {
                        b'"' => Some(string(c)?).filter(|s| !s.is_empty()),
                        _ => c.skip_value().map(|()| None)?,
                    }
                }
                _ => c.skip_value()?,
            }
            Ok(())
        })?;
    } else {
        let (from, to, _) = raw(c)?;
        let text = shown(c.data, from, to);
        push_problem(out, index, start, ProblemKind::NotAnObject { text });
    }
    push_job(out, index, start, f);
    Ok(())
}

/// A number column's value; a value of the wrong type becomes the job's problem unless it
/// already has one.
fn int(field: &'static str, value: Option<Num>, first: &mut Option<ProblemKind>) -> Option<i64> {
    match value {
        Some(Num::Int(v)) => Some(v),
        Some(Num::Bad(text)) => {
            first.get_or_insert(ProblemKind::NotANumber { field, text });
            None
        }
        _ => None,
    }
}

fn push_problem(out: &mut Scan, index: usize, offset: usize, kind: ProblemKind) {
    if out.problems.last().is_none_or(|p| p.index != index) {
        out.problems.push(Problem {
            index,
            offset,
            line: 0, // set by `locate` once the scan is done
            kind,
        });
    }
}

/// Adds one job's columns and records its first problem in the order the Python reader
/// checked them: job_id, array ids, job_state, nodes, node_count.
fn push_job(out: &mut Scan, index: usize, offset: usize, f: JobFields) {
    let mut first = None;
    let job_id = match f.job_id {
        None => {
            first = Some(ProblemKind::NoJobId);
            None
        }
        Some(Num::Unset) => {
            first = Some(ProblemKind::JobIdNotSet);
            None
        }
        value => int("job_id", value, &mut first),
    };
    let array_job_id = int("array_job_id", f.array_job_id, &mut first);
    let array_task_id = int("array_task_id", f.array_task_id, &mut first);
    let job_state = match f.job_state {
        Some(Ok(states)) => states,
        Some(Err(text)) => {
            first.get_or_insert(ProblemKind::BadState { text });
            Vec::new()
        }
        None => Vec::new(),
    };
    let nodes = match f.nodes {
        Some(Scalar::Str(s)) if !s.is_empty() => Some(s),
        Some(Scalar::Other(text)) => {
            first.get_or_insert(ProblemKind::NodesNotString { text });
            None
        }
        _ => None,
    };
    let node_count = int("node_count", f.node_count, &mut first);
    let user_name = match f.user_name {
        Some(Scalar::Str(s) | Scalar::Other(s)) => Some(s),
        _ => None,
    };
    let user_id = match f.user_id {
        Some(Num::Int(v)) => Some(v),
        _ => None,
    };
    if let Some(kind) = first {
        push_problem(out, index, offset, kind);
    }
    let jobs = &mut out.jobs;
    jobs.job_id.push(job_id);
    jobs.array_job_id.push(array_job_id);
    jobs.array_task_id.push(array_task_id);
    jobs.job_state.push(job_state);
    jobs.nodes.push(nodes);
    jobs.node_count.push(node_count);
    jobs.user_name.push(user_name);
    jobs.user_id.push(user_id);
}
