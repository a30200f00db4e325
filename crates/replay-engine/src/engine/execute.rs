//! Executing a rank's rows: compute gaps, point-to-point calls, waits and tests.

use super::core::{Engine, Outcome};
use super::messages::USER;
use super::ranks::RState;
use crate::fabric::Time;
use crate::ops::Op;
use crate::trace::{ANY_SOURCE, SAME};

impl Engine {
    /// Runs rank `r` from `t` for as long as it does not need to wait for other events.
    pub(super) fn resume(&mut self, r: u32, t: Time) {
        let mut t = t;
        loop {
            self.now = t;
            let outcome = match self.ranks[r as usize].state {
                RState::Ready => self.start_row(r),
                // The call returns (finish_row waits out a host detour in progress).
                RState::Woken if self.ranks[r as usize].coll.is_none() => Outcome::End(t),
                // Woken in a collective: its program's wait ended; it goes on now (nothing
                // pending is earlier, so the queue would give it straight back), or after
                // a host detour in progress.
                RState::Woken => match self.cpu_back(r, t) {
                    back if back > t => {
                        self.ranks[r as usize].state = RState::CollStep;
                        Outcome::Continue(back)
                    }
                    _ => self.coll_step(r),
                },
                RState::CollStep => self.coll_step(r),
                RState::Blocked { .. } | RState::Gathered | RState::Done => return,
            };
            let next = match outcome {
                Outcome::End(end) => self.finish_row(r, end),
                Outcome::Continue(at) => Some(at),
                Outcome::Blocked | Outcome::Failed => None,
            };
            let Some(next) = next else { return };
            if self.nothing_before(next) {
                t = next; // nothing else can happen before: keep going without the queue
            } else {
                self.push(next, super::core::Ev::Resume(r));
                return;
            }
        }
    }

    /// Ends the current row at `end`; returns when the next row starts (after its compute gap).
    pub(super) fn finish_row(&mut self, r: u32, end: Time) -> Option<Time> {
        // One test of the host model for both its questions (the usual case has none).
        let mut host = self.host_cpu.as_deref_mut();
        let end = match host.as_deref_mut() {
            None => end,
            Some(h) => h.back(r, end),
        };
        let rank = &mut self.ranks[r as usize];
        let job = &mut self.jobs[rank.job as usize];
        job.record(rank, end);
        let captured_end = rank.rows.current().t_end;
        // The current row started only with its successor buffered (or as the last one).
        let Some(next_start) = rank.rows.advance() else {
            self.rank_done(r, end);
            return None;
        };
        rank.state = RState::Ready;
        let work = (next_start - captured_end).max(0) as f64 * self.compute_scale;
        Some(match host {
            None => end + work,
            Some(h) => h.work(r, end, work, self.now),
        })
    }

    fn start_row(&mut self, r: u32) -> Outcome {
        let now = self.now;
        let rank = &mut self.ranks[r as usize];
        if !rank.rows.can_start() {
            if rank.rows.exhausted() {
                self.rank_done(r, now);
            } else {
                self.starved = Some((r, now)); // the driver feeds rows, then it goes on
            }
            return Outcome::Blocked;
        }
        let row = *rank.rows.current();
        rank.cur_start = now;
        self.stats.actions += 1;
        let base = self.jobs[rank.job as usize].base;
        let op = Op::from_code(row.op).unwrap_or(Op::Other);
        let (peer, tag, comm) = (row.peer, row.tag, row.comm);
        let sbytes = row.send_bytes.max(0) as u64;
        let dest = (peer >= 0).then(|| base + peer as u32);
        let source = |p: i32| match p {
            p if p >= 0 => Some(i64::from(base + p as u32)),
            ANY_SOURCE => Some(i64::from(ANY_SOURCE)),
            _ => None,
        };
        let request = row.request;
        match op {
            Op::Other
            | Op::Init
            | Op::Finalize
            | Op::CommSplit
            | Op::CommDup
            | Op::CommCreate
            | Op::CommFree => Outcome::End(now),
            Op::Compute => {
                let d = (row.t_end - row.t_start) as f64 * self.compute_scale;
                Outcome::End(self.cpu_work(r, now, d))
            }
            Op::Send | Op::Bsend | Op::Rsend | Op::Ssend => {
                let (req, _) = self.post_send(r, dest, sbytes, tag, comm, USER, op == Op::Ssend);
                self.wait_one(r, req)
            }
            Op::Isend | Op::Ibsend | Op::Irsend | Op::Issend => {
                let (req, sent) =
                    self.post_send(r, dest, sbytes, tag, comm, USER, op == Op::Issend);
                self.register(r, request, req);
                Outcome::End(sent) // after the send overhead
            }
            Op::Recv => {
                let req = self.post_recv(r, source(peer), tag, comm, USER);
                self.wait_one(r, req)
            }
            Op::Irecv => {
                let req = self.post_recv(r, source(peer), tag, comm, USER);
                self.register(r, request, req);
                Outcome::End(now)
            }
            Op::Sendrecv => {
                let pick = |v: i32, default: i32| if v == SAME { default } else { v };
                let (rp, rt) = self.ranks[r as usize].rows.current_recv();
                let (from, rtag) = (pick(rp, peer), pick(rt, tag));
                let (s, _) = self.post_send(r, dest, sbytes, tag, comm, USER, false);
                let v = self.post_recv(r, source(from), rtag, comm, USER);
                let mut slots = self.take_scratch();
                slots.extend([s, v]);
                self.wait_on(r, slots, false)
            }
            Op::Wait | Op::Waitall | Op::Waitsome => {
                let targets = self.targets(r, request, true);
                self.wait_on(r, targets, false)
            }
            Op::Waitany => {
                let named = request >= 0;
                let targets = self.targets(r, request, false);
                self.wait_on(r, targets, !named)
            }
            // A test row names the requests it found complete in the captured run; the
            // program relies on them from here on, so the replay waits for them. A test
            // that completed nothing names none and costs nothing.
            Op::Test | Op::Testall | Op::Testany | Op::Testsome => {
                if request < 0 && self.ranks[r as usize].rows.requests().is_empty() {
                    Outcome::End(now)
                } else {
                    let targets = self.targets(r, request, true);
                    self.wait_on(r, targets, false)
                }
            }
            _ => self.start_collective(r, op),
        }
    }

    /// Remembers a nonblocking request under the trace's request id.
    #[inline(always)]
    fn register(&mut self, r: u32, request: i64, slot: u32) {
        let gen = self.reqs[slot].gen;
        let rank = &mut self.ranks[r as usize];
        if request >= 0 {
            rank.reqmap.insert(request, (slot, gen));
        }
        rank.outstanding.push((slot, gen));
        if rank.outstanding.len() >= 1024 && rank.outstanding.len().is_power_of_two() {
            let reqs = &self.reqs;
            rank.outstanding.retain(|&(s, g)| reqs.valid(s, g));
        }
    }

    /// Requests a wait/test row refers to: its `request`, else its `requests` list, else
    /// (neither given) every outstanding request of the rank.
    #[inline(always)]
    fn targets(&mut self, r: u32, request: i64, take_all: bool) -> Vec<u32> {
        let mut out = self.take_scratch();
        let super::ranks::RankRt {
            rows,
            reqmap,
            outstanding,
            ..
        } = &mut self.ranks[r as usize];
        let reqs = &self.reqs;
        let single = [request];
        let named: &[i64] = if request >= 0 {
            &single
        } else {
            rows.requests()
        };
        if !named.is_empty() {
            // Ids already completed by an earlier wait, or never posted, are skipped.
            out.extend(named.iter().filter_map(|id| match reqmap.remove(id) {
                Some((s, g)) if reqs.valid(s, g) => Some(s),
                _ => None,
            }));
            return out;
        }
        out.extend(
            outstanding
                .iter()
                .filter(|&&(s, g)| reqs.valid(s, g))
                .map(|&(s, _)| s),
        );
        if take_all {
            outstanding.clear();
        }
        out
    }

    /// When `work` ns of CPU work rank `r` can begin at `t` end: `t + work`, stretched by
    /// the rank's host detours and after work that occupies its CPU then (host_cpu.rs).
    #[inline(always)]
    pub(super) fn cpu_work(&mut self, r: u32, t: Time, work: Time) -> Time {
        match self.host_cpu.as_deref_mut() {
            None => t + work,
            Some(h) => h.work(r, t, work, self.now),
        }
    }

    /// When receiver or sender `r`, handling a message or its control at `t`, is done with
    /// its overhead `o` for it: on its CPU when overheads occupy it (host_cpu.rs), else
    /// `t + o`, the same for every message.
    #[inline(always)]
    pub(super) fn cpu_overhead(&mut self, r: u32, t: Time, o: Time) -> Time {
        match self.host_cpu.as_deref_mut() {
            None => t + o,
            Some(h) => h.overhead(r, t, o, self.now),
        }
    }

    /// When rank `r`, whose MPI call has what it waited for at `t`, runs again (after the
    /// work occupying its CPU and a host detour in progress then).
    #[inline(always)]
    pub(super) fn cpu_back(&mut self, r: u32, t: Time) -> Time {
        match self.host_cpu.as_deref_mut() {
            None => t,
            Some(n) => n.back(r, t),
        }
    }

    /// An empty slot buffer (reused, so waits allocate nothing in the steady state).
    pub(super) fn take_scratch(&mut self) -> Vec<u32> {
        let mut v = std::mem::take(&mut self.scratch);
        v.clear();
        v
    }

    /// Blocks rank `r` until request `slot` completes.
    fn wait_one(&mut self, r: u32, slot: u32) -> Outcome {
        let mut slots = self.take_scratch();
        slots.push(slot);
        self.wait_on(r, slots, false)
    }

    /// Blocks rank `r` until all (or, with `any`, the first) of `slots` complete.
    #[inline(always)]
    pub(super) fn wait_on(&mut self, r: u32, slots: Vec<u32>, any: bool) -> Outcome {
        if any {
            return self.wait_any(r, slots);
        }
        let now = self.now;
        let (mut pending, mut latest) = (0u32, now);
        for &s in &slots {
            let req = &mut self.reqs[s];
            if req.is_done() {
                latest = latest.max(req.done_at);
            } else {
                pending += 1;
                req.waited = true;
            }
            self.consume(s);
        }
        self.scratch = slots;
        if pending == 0 {
            return Outcome::End(latest);
        }
        self.ranks[r as usize].state = RState::Blocked {
            pending,
            latest,
            any: false,
        };
        Outcome::Blocked
    }

    /// waitany: the request that completes first (in simulated time) ends the wait.
    fn wait_any(&mut self, r: u32, slots: Vec<u32>) -> Outcome {
        let now = self.now;
        if slots.is_empty() {
            self.scratch = slots;
            return Outcome::End(now);
        }
        let (mut first, mut pending) = (None::<(Time, u32)>, 0u32);
        for &s in &slots {
            let req = &self.reqs[s];
            if !req.is_done() {
                pending += 1;
            } else if first.is_none_or(|(t, _)| req.done_at < t) {
                first = Some((req.done_at, s));
            }
        }
        if let Some((t, s)) = first.filter(|&(t, _)| t <= now) {
            self.consume(s);
            self.scratch = slots;
            return Outcome::End(now.max(t));
        }
        for &s in &slots {
            self.reqs[s].waited = true;
        }
        if let Some((t, s)) = first {
            // Known to complete later: it ends the wait then unless another is earlier.
            self.push(t, super::core::Ev::Signal(s));
        }
        let rank = &mut self.ranks[r as usize];
        self.scratch = std::mem::replace(&mut rank.waiting, slots);
        rank.state = RState::Blocked {
            pending,
            latest: now,
            any: true,
        };
        Outcome::Blocked
    }
}
