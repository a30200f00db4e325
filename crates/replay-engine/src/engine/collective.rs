//! Collectives: a trace row becomes a `CollSpec`, Open MPI's decision (or a `--coll`
//! override) picks the algorithm, the collectives module gives this rank's step schedule,
//! and the steps run as point-to-point messages on the collective channels.
//!
//! Byte conventions of trace rows are those of tailcast.traces.schema (MPI's arguments, i.e.
//! OSU's size convention): bcast/reduce/allreduce the message size; alltoall, allgather,
//! gather, scatter the per-peer block; v-forms per-rank `send_counts`/`recv_counts`;
//! reduce_scatter `recv_counts` (vector = their sum); reduce_scatter_block the block.
//! gatherv/scatterv have no coll/tuned decision in Open MPI 4.1 (basic linear is used).

use std::rc::Rc;

use super::closed_form::ClosedForms;
use super::core::{Engine, Outcome};
use super::plan::ShapeKey;
use super::ranks::{CollMemo, CollRun, RState};
use crate::collectives::{self, Algo, AlgoParams, CollKind, CollSpec, Step};
use crate::error::ReplayError;
use crate::hash::FastMap;
use crate::ops::Op;

/// Open MPI's defaults when an algorithm is forced by MCA parameter
/// (coll_tuned_<coll>_algorithm_segmentsize = 0, *_tree_fanout = *_chain_fanout = 4).
const FORCED_PARAMS: AlgoParams = AlgoParams {
    segsize: 0,
    fanout: 4,
};

/// A collective shape and one member's communicator rank.
type ScheduleKey = (ShapeKey, u32);

/// What the engine keeps about collectives: forced algorithms, schedules and communicator
/// member lists built so far, and the closed-form evaluation.
pub(super) struct Collectives {
    overrides: Vec<(CollKind, Algo)>,
    schedules: FastMap<ScheduleKey, Rc<[Step]>>,
    members: FastMap<(u32, i32), Rc<[u32]>>,
    pub closed: ClosedForms,
}

impl Collectives {
    pub fn new(overrides: std::collections::HashMap<CollKind, Algo>, closed: ClosedForms) -> Self {
        let mut overrides: Vec<(CollKind, Algo)> = overrides.into_iter().collect();
        overrides.sort_unstable();
        Self {
            overrides,
            schedules: FastMap::default(),
            members: FastMap::default(),
            closed,
        }
    }
}

fn to_u64(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&x| x.max(0) as u64).collect()
}

/// The CollSpec of a trace row; `s`/`r` are send/recv bytes, `sc`/`rc` the count lists.
fn spec_of(kind: CollKind, p: u32, root: u32, s: u64, r: u64, sc: &[i64], rc: &[i64]) -> CollSpec {
    let n = u64::from(p.max(1));
    let or = |a: u64, b: u64| if a > 0 { a } else { b };
    let counts = |c: &[i64], total: u64| {
        if c.len() == p as usize {
            to_u64(c)
        } else {
            vec![total / n; p as usize]
        }
    };
    let bytes = match kind {
        CollKind::Barrier => 0,
        CollKind::Bcast | CollKind::Reduce | CollKind::Allreduce => s.max(r),
        CollKind::Alltoall | CollKind::Allgather | CollKind::Gather => or(s, r),
        CollKind::Scatter | CollKind::ReduceScatterBlock => or(r, s),
        CollKind::Alltoallv => or(s, r) / n,
        CollKind::Allgatherv => counts(rc, r).iter().sum::<u64>() / n,
        CollKind::ReduceScatter => or(s, rc.iter().map(|&x| x.max(0) as u64).sum()),
    };
    let mut spec = CollSpec::new(kind, p, root, bytes);
    match kind {
        CollKind::Alltoallv => {
            spec.per_peer_bytes = counts(sc, s);
            spec.recv_per_peer_bytes = counts(rc, r);
        }
        CollKind::Allgatherv => spec.per_peer_bytes = counts(rc, r),
        CollKind::ReduceScatter if rc.len() == p as usize => spec.per_peer_bytes = to_u64(rc),
        _ => {}
    }
    spec
}

impl Engine {
    pub(super) fn start_collective(&mut self, r: u32, op: Op) -> Outcome {
        let Some(kind) = op.collective() else {
            return Outcome::End(self.now);
        };
        let rank = &self.ranks[r as usize];
        let job_id = rank.job;
        let job = &self.jobs[job_id as usize];
        let row = *rank.rows.current();
        let row_id = rank.rows.current_id() as usize;
        let comm = row.comm;
        let (sc, rc) = (rank.rows.send_counts(), rank.rows.recv_counts());
        let args = (op as u8, comm, row.root, row.send_bytes, row.recv_bytes);
        let plain = sc.is_empty() && rc.is_empty();
        if plain {
            // A repeated call (same arguments) takes the same closed-form path.
            if let Some(m) = rank.memo.as_ref().filter(|m| m.args == args) {
                let (shape, plan, members, me) = (m.shape, m.plan.clone(), m.members.clone(), m.me);
                let inst = self.ranks[r as usize].next_instance(comm);
                return self.gather(r, me, comm, inst, shape, plan, members);
            }
        }
        let members = match self.colls.members.get(&(job_id, comm)) {
            Some(m) => m.clone(),
            None => {
                let local = job.comms.get(&comm).map(Vec::as_slice).unwrap_or(&[]);
                let m: Rc<[u32]> = local.iter().map(|&l| job.base + l).collect();
                self.colls.members.insert((job_id, comm), m.clone());
                m
            }
        };
        let p = members.len() as u32;
        let local = rank.local;
        let Some(me) = members.iter().position(|&m| m == r) else {
            let m = format!("rank {local} is not a member of communicator {comm}");
            return self.fail(job_id, row_id, m);
        };
        let me = me as u32;
        let root = if row.root >= 0 {
            match members
                .iter()
                .position(|&m| m == job.base + row.root as u32)
            {
                Some(i) => i as u32,
                None => {
                    let m = format!("root {} is not a member of communicator {comm}", row.root);
                    return self.fail(job_id, row_id, m);
                }
            }
        } else {
            0
        };
        let (s, v) = (row.send_bytes.max(0) as u64, row.recv_bytes.max(0) as u64);
        let spec = spec_of(kind, p, root, s, v, sc, rc);
        let forced = self
            .colls
            .overrides
            .iter()
            .find(|o| o.0 == kind)
            .map(|o| o.1);
        let (algo, params) = match forced {
            Some(algo) => (algo, FORCED_PARAMS),
            None if matches!(op, Op::Gatherv | Op::Scatterv) => (Algo::Linear, FORCED_PARAMS),
            None => collectives::decide(&spec),
        };
        let cacheable = spec.per_peer_bytes.is_empty() && spec.recv_per_peer_bytes.is_empty();
        let shape = (
            kind,
            p,
            root,
            spec.bytes,
            algo,
            params.segsize,
            params.fanout,
        );
        if cacheable && self.colls.closed.enabled {
            if let Some(plan) = self.plan_for(shape, &spec, algo, &params) {
                let rank = &mut self.ranks[r as usize];
                if plain {
                    rank.memo = Some(CollMemo {
                        args,
                        shape,
                        plan: plan.clone(),
                        members: members.clone(),
                        me,
                    });
                }
                let inst = rank.next_instance(comm);
                return self.gather(r, me, comm, inst, shape, plan, members);
            }
        }
        let key = (shape, me);
        let cached = if cacheable {
            self.colls.schedules.get(&key).cloned()
        } else {
            None
        };
        let steps = match cached {
            Some(steps) => steps,
            None => match collectives::schedule(&spec, algo, &params, me) {
                Ok(steps) => {
                    let steps: Rc<[Step]> = steps.into();
                    if cacheable {
                        self.colls.schedules.insert(key, steps.clone());
                    }
                    steps
                }
                Err(e) => {
                    let m = format!("{} ({algo:?}): {e}", op.name());
                    return self.fail(job_id, row_id, m);
                }
            },
        };
        let rank = &mut self.ranks[r as usize];
        let inst = rank.next_instance(comm);
        rank.coll = Some(CollRun {
            steps,
            step: 0,
            members,
            comm,
            inst,
        });
        rank.state = RState::CollStep;
        Outcome::Continue(self.now)
    }

    fn fail(&mut self, job: u32, row: usize, message: String) -> Outcome {
        if self.fatal.is_none() {
            self.fatal = Some(ReplayError::Collective {
                trace: job,
                row,
                message,
            });
        }
        Outcome::Failed
    }

    /// Posts every send and receive of the current step, or ends the collective.
    pub(super) fn coll_step(&mut self, r: u32) -> Outcome {
        let run = self.ranks[r as usize]
            .coll
            .clone()
            .expect("in a collective");
        if run.step == run.steps.len() {
            self.ranks[r as usize].coll = None;
            return Outcome::End(self.now);
        }
        let step = &run.steps[run.step];
        let mut slots = self.take_scratch();
        for &(peer, bytes) in &step.sends {
            let dst = run.members[peer as usize];
            if dst != r {
                slots.push(self.post_send(r, Some(dst), bytes, 0, run.comm, run.inst, false));
            }
        }
        for &(peer, _) in &step.recvs {
            let src = run.members[peer as usize];
            if src != r {
                slots.push(self.post_recv(r, Some(i64::from(src)), 0, run.comm, run.inst));
            }
        }
        match self.wait_on(r, slots, false) {
            Outcome::End(t) => {
                self.now = t.max(self.now);
                self.coll_step_done(r)
            }
            other => other,
        }
    }

    /// The current step's messages completed at `now`: reduce, then go to the next step.
    pub(super) fn coll_step_done(&mut self, r: u32) -> Outcome {
        let gamma = self.net.host.gamma_ns_per_byte;
        let rank = &mut self.ranks[r as usize];
        let run = rank.coll.as_mut().expect("in a collective");
        let reduce = run.steps[run.step].reduce_bytes as f64 * gamma;
        run.step += 1;
        rank.state = RState::CollStep;
        Outcome::Continue(self.now + reduce)
    }
}
