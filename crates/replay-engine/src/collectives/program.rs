//! One rank's part of a collective as the point-to-point calls Open MPI 4.1.4's coll/base
//! code makes, in its order: nonblocking sends and receives (each a request, numbered in
//! post order), waits on given requests, local reductions, and the waitany refill loop of
//! alltoall linear_sync. Blocking calls are a post followed by a wait, as the PML does them.
//! The engine runs a program event by event (engine/collective.rs) or, when every member's
//! exit depends on every entry, evaluates all members' programs at once (engine/plan/).

/// One call. Request numbers count the `Send`/`Recv` instructions of the program from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instr {
    /// MCA_PML_CALL(isend); `sync` = MCA_PML_BASE_SEND_SYNCHRONOUS (done once matched).
    Send { peer: u32, bytes: u64, sync: bool },
    /// MCA_PML_CALL(irecv).
    Recv { peer: u32, bytes: u64 },
    /// ompi_request_wait(_all) on the requests `waits[lo..hi]`.
    Wait { lo: u32, hi: u32 },
    /// ompi_op_reduce over `bytes` bytes (γ per byte of host time).
    Reduce { bytes: u64 },
    /// The waitany loop of ompi_coll_base_alltoall_intra_linear_sync: the receives
    /// `window[lo..mid]` and the sends `window[mid..hi]` are posted `k` of each at first,
    /// receives first; each completed receive (send) posts the next receive (send) at the
    /// instant it completes; the loop ends when all completed.
    Window { lo: u32, mid: u32, hi: u32, k: u32 },
}

/// A rank's program: its instructions, the request lists of its waits, and the
/// (peer, bytes) transfers of its windows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Program {
    pub instrs: Vec<Instr>,
    pub waits: Vec<u32>,
    pub window: Vec<(u32, u64)>,
    /// Requests the `Send`/`Recv` instructions open (windows excluded).
    pub requests: u32,
}

/// A request of the program being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req(pub u32);

impl Program {
    /// The requests a `Wait { lo, hi }` names.
    pub fn waited(&self, lo: u32, hi: u32) -> &[u32] {
        &self.waits[lo as usize..hi as usize]
    }

    /// Whether the program has a waitany window (the closed form cannot evaluate those).
    pub fn has_window(&self) -> bool {
        self.instrs
            .iter()
            .any(|i| matches!(i, Instr::Window { .. }))
    }

    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// isend.
    pub fn isend(&mut self, peer: u32, bytes: u64) -> Req {
        self.post(Instr::Send {
            peer,
            bytes,
            sync: false,
        })
    }

    /// isend in synchronous mode (MCA_PML_BASE_SEND_SYNCHRONOUS).
    pub fn issend(&mut self, peer: u32, bytes: u64) -> Req {
        self.post(Instr::Send {
            peer,
            bytes,
            sync: true,
        })
    }

    /// irecv.
    pub fn irecv(&mut self, peer: u32, bytes: u64) -> Req {
        self.post(Instr::Recv { peer, bytes })
    }

    fn post(&mut self, i: Instr) -> Req {
        self.instrs.push(i);
        self.requests += 1;
        Req(self.requests - 1)
    }

    /// ompi_request_wait / wait_all. Waits with nothing in between merge into one (the
    /// time a rank resumes is the same).
    pub fn wait_all(&mut self, reqs: &[Req]) {
        if reqs.is_empty() {
            return;
        }
        let end = self.waits.len() as u32;
        if let Some(Instr::Wait { hi, .. }) = self.instrs.last_mut() {
            if *hi == end {
                self.waits.extend(reqs.iter().map(|r| r.0));
                *hi = self.waits.len() as u32;
                return;
            }
        }
        self.waits.extend(reqs.iter().map(|r| r.0));
        self.instrs.push(Instr::Wait {
            lo: end,
            hi: self.waits.len() as u32,
        });
    }

    pub fn wait(&mut self, r: Req) {
        self.wait_all(&[r]);
    }

    /// Blocking MCA_PML_CALL(send).
    pub fn send(&mut self, peer: u32, bytes: u64) {
        let r = self.isend(peer, bytes);
        self.wait(r);
    }

    /// Blocking synchronous send.
    pub fn ssend(&mut self, peer: u32, bytes: u64) {
        let r = self.issend(peer, bytes);
        self.wait(r);
    }

    /// Blocking MCA_PML_CALL(recv).
    pub fn recv(&mut self, peer: u32, bytes: u64) {
        let r = self.irecv(peer, bytes);
        self.wait(r);
    }

    /// ompi_coll_base_sendrecv_actual (coll_base_util.c): irecv, blocking send, wait. With
    /// `me` both ways, ompi_coll_base_sendrecv copies locally: no message.
    pub fn sendrecv(&mut self, me: u32, to: u32, sbytes: u64, from: u32, rbytes: u64) {
        if to == me && from == me {
            return;
        }
        let r = self.irecv(from, rbytes);
        let s = self.isend(to, sbytes);
        self.wait_all(&[s, r]);
    }

    /// ompi_op_reduce over `bytes` bytes (none for 0; consecutive ones add up).
    pub fn reduce(&mut self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        if let Some(Instr::Reduce { bytes: b }) = self.instrs.last_mut() {
            *b += bytes;
            return;
        }
        self.instrs.push(Instr::Reduce { bytes });
    }

    /// The waitany refill loop (see `Instr::Window`).
    pub fn window(&mut self, recvs: &[(u32, u64)], sends: &[(u32, u64)], k: u32) {
        let lo = self.window.len() as u32;
        self.window.extend_from_slice(recvs);
        let mid = self.window.len() as u32;
        self.window.extend_from_slice(sends);
        let hi = self.window.len() as u32;
        self.instrs.push(Instr::Window { lo, mid, hi, k });
    }

    /// Appends `other` (a collective this one calls, e.g. reduce then bcast), renumbering
    /// its requests.
    pub fn append(&mut self, other: &Program) {
        let (base, wbase, vbase) = (
            self.requests,
            self.waits.len() as u32,
            self.window.len() as u32,
        );
        self.waits.extend(other.waits.iter().map(|r| r + base));
        self.window.extend_from_slice(&other.window);
        for &i in &other.instrs {
            self.instrs.push(match i {
                Instr::Wait { lo, hi } => Instr::Wait {
                    lo: lo + wbase,
                    hi: hi + wbase,
                },
                Instr::Window { lo, mid, hi, k } => Instr::Window {
                    lo: lo + vbase,
                    mid: mid + vbase,
                    hi: hi + vbase,
                    k,
                },
                other => other,
            });
        }
        self.requests += other.requests;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes a program sends, in total.
    fn bytes_sent(p: &Program) -> u64 {
        let direct: u64 = p
            .instrs
            .iter()
            .map(|i| match i {
                Instr::Send { bytes, .. } => *bytes,
                _ => 0,
            })
            .sum();
        let windowed: u64 = p
            .instrs
            .iter()
            .map(|i| match *i {
                Instr::Window { mid, hi, .. } => p.window[mid as usize..hi as usize]
                    .iter()
                    .map(|w| w.1)
                    .sum(),
                _ => 0,
            })
            .sum();
        direct + windowed
    }

    #[test]
    fn blocking_calls_are_a_post_and_a_wait_and_adjacent_waits_merge() {
        let mut p = Program::default();
        p.sendrecv(0, 1, 8, 2, 16);
        p.reduce(16);
        p.reduce(4);
        p.send(3, 1);
        assert_eq!(
            p.instrs,
            vec![
                Instr::Recv { peer: 2, bytes: 16 },
                Instr::Send {
                    peer: 1,
                    bytes: 8,
                    sync: false
                },
                Instr::Wait { lo: 0, hi: 2 },
                Instr::Reduce { bytes: 20 },
                Instr::Send {
                    peer: 3,
                    bytes: 1,
                    sync: false
                },
                Instr::Wait { lo: 2, hi: 3 },
            ]
        );
        assert_eq!(p.waited(0, 2), &[1, 0]);
        assert_eq!(p.requests, 3);
        let mut q = Program::default();
        q.recv(5, 2);
        p.append(&q);
        assert_eq!(p.waited(3, 4), &[3]);
        assert_eq!(bytes_sent(&p), 9);
        let mut self_copy = Program::default();
        self_copy.sendrecv(4, 4, 8, 4, 8);
        assert!(self_copy.is_empty());
    }
}
