//! Collectives: a trace row becomes a `CollSpec`, the selector (Open MPI's fixed rules or a
//! `--coll` override) picks the algorithm, the collectives module gives this rank's
//! program, and the program runs call by call on the collective channels.
//!
//! Byte conventions of trace rows are those of tailcast.traces.schema (MPI's arguments, i.e.
//! OSU's size convention): bcast/reduce/allreduce the message size; alltoall, allgather,
//! gather, scatter the per-peer block; v-forms per-rank `send_counts`/`recv_counts`;
//! reduce_scatter `recv_counts` (vector = their sum); reduce_scatter_block the block.
//! `dtype_bytes` and `commutative` give element counts and op commutativity (not recorded:
//! 1-byte elements and a commutative op, OSU's MPI_CHAR and MPI_SUM).

use std::rc::Rc;

use super::closed_form::Entry;
use super::core::{Engine, Ev, Outcome};
use super::plan::{Plan, ShapeKey};
use super::ranks::{CollMemo, CollPath, CollRun, RState};
use crate::collectives::{self, CollKind, CollSpec, Instr, Program};
use crate::error::ReplayError;
use crate::ops::Op;
use crate::trace::SAME;

fn to_u64(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&x| x.max(0) as u64).collect()
}

/// The CollSpec of a trace row; `s`/`r` are send/recv bytes, `sc`/`rc` the count lists,
/// `me` this rank's communicator rank.
#[allow(clippy::too_many_arguments)]
fn spec_of(
    op: Op,
    kind: CollKind,
    p: u32,
    root: u32,
    me: u32,
    s: u64,
    r: u64,
    sc: &[i64],
    rc: &[i64],
) -> CollSpec {
    let n = u64::from(p.max(1));
    let or = |a: u64, b: u64| if a > 0 { a } else { b };
    let counts = |c: &[i64], total: u64| {
        if c.len() == p as usize {
            to_u64(c)
        } else {
            vec![total / n; p as usize]
        }
    };
    let kind = match (op, kind) {
        (Op::Gatherv, _) => CollKind::Gatherv,
        (Op::Scatterv, _) => CollKind::Scatterv,
        (_, k) => k,
    };
    let bytes = match kind {
        CollKind::Barrier => 0,
        CollKind::Bcast | CollKind::Reduce | CollKind::Allreduce => s.max(r),
        CollKind::Alltoall | CollKind::Allgather | CollKind::Gather => or(s, r),
        CollKind::Scatter | CollKind::ReduceScatterBlock => or(r, s),
        CollKind::Alltoallv => or(s, r) / n,
        CollKind::Allgatherv => counts(rc, r).iter().sum::<u64>() / n,
        CollKind::ReduceScatter => or(s, rc.iter().map(|&x| x.max(0) as u64).sum()),
        CollKind::Gatherv => s,
        CollKind::Scatterv => r,
    };
    let mut spec = CollSpec::new(kind, p, root, bytes);
    match kind {
        CollKind::Alltoallv => {
            spec.per_peer_bytes = counts(sc, s);
            spec.recv_per_peer_bytes = counts(rc, r);
        }
        CollKind::Allgatherv => spec.per_peer_bytes = counts(rc, r),
        CollKind::ReduceScatter if rc.len() == p as usize => spec.per_peer_bytes = to_u64(rc),
        // the root's counts; a non-root's own block is `bytes`
        CollKind::Gatherv if me == root && rc.len() == p as usize => {
            spec.per_peer_bytes = to_u64(rc)
        }
        CollKind::Scatterv if me == root && sc.len() == p as usize => {
            spec.per_peer_bytes = to_u64(sc)
        }
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
        let (dtype, commute) = rank.rows.current_dtype();
        let args = (
            op as u8,
            comm,
            row.root,
            row.send_bytes,
            row.recv_bytes,
            dtype,
            commute,
        );
        let plain = sc.is_empty() && rc.is_empty();
        if plain {
            // A repeated call (same arguments) takes the same path.
            if let Some(m) = rank.memo.as_ref().filter(|m| m.args == args) {
                let (path, members, me) = (m.path.clone(), m.members.clone(), m.me);
                return match path {
                    CollPath::ClosedForm { shape, plan } => {
                        let inst = self.ranks[r as usize].next_instance(comm);
                        self.gather(r, me, comm, inst, shape, plan, members)
                    }
                    CollPath::Program(prog) => self.start_program(r, prog, members, comm),
                };
            }
        }
        let members = match self.programs.members.get(&(job_id, comm)) {
            Some(m) => m.clone(),
            None => {
                let local = job.comms.get(&comm).map(Vec::as_slice).unwrap_or(&[]);
                let m: Rc<[u32]> = local.iter().map(|&l| job.base + l).collect();
                self.programs.members.insert((job_id, comm), m.clone());
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
        let mut spec = spec_of(op, kind, p, root, me, s, v, sc, rc);
        if dtype != SAME && dtype > 0 {
            spec.elem_bytes = dtype as u32;
        }
        if commute != SAME {
            spec.commutative = commute != 0;
        }
        let (algo, params) = self.programs.selector.select(&spec);
        let cacheable = spec.per_peer_bytes.is_empty() && spec.recv_per_peer_bytes.is_empty();
        let shape = ShapeKey::of(&spec, algo, params);
        if cacheable && self.closed.enabled() {
            let selector = &self.programs.selector;
            if let Some(plan) = self.closed.plan_for(shape, &spec, algo, &params, selector) {
                let rank = &mut self.ranks[r as usize];
                if plain {
                    rank.memo = Some(CollMemo {
                        args,
                        path: CollPath::ClosedForm {
                            shape,
                            plan: plan.clone(),
                        },
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
            self.programs.built.get(&key).cloned()
        } else {
            None
        };
        let prog = match cached {
            Some(prog) => prog,
            None => {
                match collectives::schedule(&spec, algo, &params, me, &self.programs.selector) {
                    Ok(prog) => {
                        let prog: Rc<Program> = Rc::new(prog);
                        if cacheable {
                            self.programs.built.insert(key, prog.clone());
                        }
                        prog
                    }
                    Err(e) => {
                        let m = format!("{} ({algo:?}): {e}", op.name());
                        return self.fail(job_id, row_id, m);
                    }
                }
            }
        };
        if plain && cacheable {
            self.ranks[r as usize].memo = Some(CollMemo {
                args,
                path: CollPath::Program(prog.clone()),
                members: members.clone(),
                me,
            });
        }
        self.start_program(r, prog, members, comm)
    }

    /// Rank `r` (member `me`) enters instance `inst` of a closed-form collective.
    #[allow(clippy::too_many_arguments)]
    fn gather(
        &mut self,
        r: u32,
        me: u32,
        comm: i32,
        inst: u64,
        shape: ShapeKey,
        plan: Rc<Plan>,
        members: Rc<[u32]>,
    ) -> Outcome {
        let job = self.ranks[r as usize].job;
        let cpu = self.host_cpu.as_deref_mut();
        match self
            .closed
            .enter(job, comm, inst, shape, plan, members, me, self.now, cpu)
        {
            Entry::Disagree => {
                let row = self.ranks[r as usize].rows.current_id() as usize;
                let message = format!(
                    "members of communicator {comm} disagree on collective #{inst} (kind, \
                     size, root or bytes differ from the first member's)"
                );
                self.fail(job, row, message)
            }
            Entry::Waiting => {
                self.ranks[r as usize].state = RState::Gathered;
                Outcome::Blocked
            }
            Entry::Complete { members, messages } => {
                let exits = self.closed.exits();
                for &m in members.iter() {
                    if m != r {
                        self.ranks[m as usize].state = RState::Woken;
                    }
                }
                let others = members.iter().zip(exits).filter(|(&m, _)| m != r);
                self.queue
                    .push_batch(others.map(|(&m, &t)| (t, Ev::Resume(m))));
                self.stats.messages += messages;
                Outcome::End(exits[me as usize])
            }
        }
    }

    /// Rank `r` starts running its program of a collective on `comm` (the next step runs
    /// at once).
    fn start_program(
        &mut self,
        r: u32,
        prog: Rc<Program>,
        members: Rc<[u32]>,
        comm: i32,
    ) -> Outcome {
        let mut slots = self.programs.spare.pop().unwrap_or_default();
        slots.clear();
        let rank = &mut self.ranks[r as usize];
        let inst = rank.next_instance(comm);
        rank.coll = Some(CollRun {
            prog,
            pc: 0,
            members,
            comm,
            inst,
            slots,
            window: None,
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

    /// Runs the rank's program from its next instruction at `now` until it waits, computes
    /// or ends. Posting and waiting are the point-to-point machinery's (p2p.rs); a wait
    /// that ends later, or a reduction, continues the rank then. The run stays in the rank
    /// (read in place per instruction: moving it out and back costs more).
    pub(super) fn coll_step(&mut self, r: u32) -> Outcome {
        let outcome = loop {
            let run = self.coll_run(r);
            let Some(&ins) = run.prog.instrs.get(run.pc) else {
                let run = self.ranks[r as usize].coll.take().expect("in a collective");
                self.programs.spare.push(run.slots);
                return Outcome::End(self.now);
            };
            let (comm, inst) = (run.comm, run.inst);
            match ins {
                Instr::Send { peer, bytes, sync } => {
                    let dst = run.members[peer as usize];
                    let (slot, _) = self.post_send(r, Some(dst), bytes, 0, comm, inst, sync);
                    self.coll_run(r).slots.push(slot);
                }
                Instr::Recv { peer, .. } => {
                    let src = i64::from(run.members[peer as usize]);
                    let slot = self.post_recv(r, Some(src), 0, comm, inst);
                    self.coll_run(r).slots.push(slot);
                }
                Instr::Wait { lo, hi } => {
                    let mut slots = self.take_scratch();
                    let run = self.coll_run(r);
                    run.pc += 1;
                    let waited = run.prog.waited(lo, hi).iter();
                    slots.extend(waited.map(|&q| run.slots[q as usize]));
                    match self.wait_on(r, slots, false) {
                        Outcome::End(t) if t <= self.now => continue,
                        Outcome::End(t) => break Outcome::Continue(self.cpu_back(r, t)),
                        other => break other,
                    }
                }
                Instr::Reduce { bytes } => {
                    self.coll_run(r).pc += 1;
                    let gamma = self.net.host.gamma_ns_per_byte;
                    break Outcome::Continue(self.cpu_work(r, self.now, bytes as f64 * gamma));
                }
                Instr::Window { .. } => {
                    let mut run = self.ranks[r as usize].coll.take().expect("in a collective");
                    let step = self.window_step(r, &mut run);
                    self.ranks[r as usize].coll = Some(run);
                    match step {
                        Some(outcome) => break outcome,
                        None => continue, // done: pc moved on
                    }
                }
            }
            self.coll_run(r).pc += 1;
        };
        if !matches!(outcome, Outcome::Blocked) {
            self.ranks[r as usize].state = RState::CollStep;
        }
        outcome
    }

    #[inline]
    fn coll_run(&mut self, r: u32) -> &mut CollRun {
        self.ranks[r as usize]
            .coll
            .as_mut()
            .expect("in a collective")
    }

    /// One turn of the waitany loop of alltoall linear_sync (`Instr::Window`): retire the
    /// requests complete by now (the one a waitany returned is already gone), post
    /// replacements, and wait for the next completion. None when the loop has ended.
    fn window_step(&mut self, r: u32, run: &mut CollRun) -> Option<Outcome> {
        let Instr::Window { lo, mid, hi, k } = run.prog.instrs[run.pc] else {
            unreachable!("window_step on another instruction");
        };
        let mut w = run.window.take().unwrap_or_default();
        let now = self.now;
        let mut open = std::mem::take(&mut w.open);
        open.retain(|&(s, gen, _)| {
            if !self.reqs.valid(s, gen) {
                return false; // consumed by the waitany that woke us
            }
            let req = self.reqs[s];
            if req.is_done() && req.done_at <= now {
                self.consume(s);
                return false;
            }
            true
        });
        let count = |recv: bool| open.iter().filter(|o| o.2 == recv).count() as u32;
        let (mut nr, mut ns) = (count(true), count(false));
        while nr < k && lo + w.next_recv < mid {
            let (peer, _) = run.prog.window[(lo + w.next_recv) as usize];
            let src = i64::from(run.members[peer as usize]);
            let s = self.post_recv(r, Some(src), 0, run.comm, run.inst);
            open.push((s, self.reqs[s].gen, true));
            w.next_recv += 1;
            nr += 1;
        }
        while ns < k && mid + w.next_send < hi {
            let (peer, bytes) = run.prog.window[(mid + w.next_send) as usize];
            let dst = run.members[peer as usize];
            let (s, _) = self.post_send(r, Some(dst), bytes, 0, run.comm, run.inst, false);
            open.push((s, self.reqs[s].gen, false));
            w.next_send += 1;
            ns += 1;
        }
        if open.is_empty() {
            run.pc += 1;
            return None;
        }
        let mut slots = self.take_scratch();
        slots.extend(open.iter().map(|o| o.0));
        w.open = open;
        run.window = Some(w);
        Some(match self.wait_on(r, slots, true) {
            // one was complete already (at `now`): the next turn retires it
            Outcome::End(_) => Outcome::Continue(now),
            other => other,
        })
    }
}
