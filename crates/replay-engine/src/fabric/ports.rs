//! Endpoint ports of the contention-free models (α-β, LogGP): each endpoint has `k` send
//! ports and `k` receive ports, each serving one message at a time. `k` = 1 is the
//! single-port, full-duplex endpoint of the Hockney model as Pješivac-Grbović et al.
//! (Cluster Computing 10(2), 2007) use it for Open MPI's collectives: one send and one
//! receive in flight per process.
//!
//! A port serves the messages waiting for it in the order their ranks posted them: a send
//! port by the sends' posting numbers, a receive port by the numbers of the receives they
//! match (unexpected eager messages after those, first come first served). Open MPI's
//! collectives post in a deliberate order — `alltoall_intra_basic_linear` sends to
//! me-1, me-2, … so that every step is a permutation — and that order is lost if a port
//! serves messages in the order the engine happened to match them. A port decides at an
//! instant only after every message that became ready at that instant is in: its turn is
//! the last timer of the instant.
//!
//! A message takes a send port when it is ready to leave, and a receive port of its
//! destination when its data reaches the destination's NIC (not reserved ahead, so a
//! waiting message never blocks a destination that is idle in between).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::timers::Timers;
use super::{Delivery, Time, Transfer, TransferId, TransferInfo};

/// Free-at times of every endpoint's send ports, taken first come first served at once
/// (the injection channel of LogGP's `ports = 0` form). Grown on demand: these models have
/// no fixed endpoint count.
#[derive(Debug, Default)]
pub struct Ports {
    k: usize,
    send: Vec<Time>,
}

impl Ports {
    /// `k` ports per endpoint (k >= 1).
    pub fn new(k: u32) -> Self {
        Self {
            k: k.max(1) as usize,
            send: Vec::new(),
        }
    }

    /// Takes the earliest free port of endpoint `e` in `free` at or after `ready` for
    /// `busy`; returns when the port starts serving.
    fn take(k: usize, free: &mut Vec<Time>, e: u32, ready: Time, busy: Time) -> Time {
        let lo = e as usize * k;
        if free.len() < lo + k {
            free.resize(lo + k, 0.0);
        }
        let slots = &mut free[lo..lo + k];
        let (i, &at) = slots
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("k >= 1");
        let start = if at > ready { at } else { ready };
        slots[i] = start + busy;
        start
    }

    /// A message ready to leave `e` at `ready`, holding a send port for `busy`.
    pub fn send(&mut self, e: u32, ready: Time, busy: Time) -> Time {
        Self::take(self.k, &mut self.send, e, ready, busy)
    }
}

/// How long a message holds each port and when its data lands.
#[derive(Debug, Clone, Copy)]
pub struct Costs {
    /// Holding the send port, and the receive port.
    pub send_busy: Time,
    pub recv_busy: Time,
    /// From taking the send port to reaching the destination's NIC.
    pub lead: Time,
    /// From taking the receive port to the last byte delivered.
    pub wire: Time,
}

/// A message waiting for (or holding) a port.
#[derive(Debug, Clone, Copy)]
struct Queued {
    id: TransferId,
    dst: u32,
    recv_posted: u64,
    costs: Costs,
}

/// A heap entry: ordered by (posting number, arrival at the port), popped smallest first.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    key: Reverse<(u64, u64)>,
    msg: Queued,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// One direction of one endpoint: its ports' free-at times and the messages waiting.
#[derive(Debug, Default)]
struct Side {
    free: Vec<Time>,
    waiting: BinaryHeap<Waiting>,
    /// A turn of this side is scheduled.
    turn: bool,
}

impl Side {
    /// A port free at `t`, if any.
    fn free_at(&self, t: Time) -> Option<usize> {
        let (i, at) = self.first_free();
        (at <= t).then_some(i)
    }

    /// The earliest free port and when it frees.
    fn first_free(&self) -> (usize, Time) {
        let (i, &at) = self
            .free
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1))
            .expect("k >= 1");
        (i, at)
    }
}

/// A message's data reaching its destination's NIC, or its last byte delivered.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Arrive(Queued),
    Deliver(TransferId),
}

/// Ports served in posting order, plus the timers of messages on their way.
#[derive(Debug, Default)]
pub struct PortedLinks {
    k: usize,
    send: Vec<Side>,
    recv: Vec<Side>,
    /// Arrivals at NICs, after which the senders' turns, then the receivers' turns come
    /// at one instant (a message started at a send turn may reach its NIC at once).
    stages: Timers<Stage>,
    send_turns: Timers<u32>,
    recv_turns: Timers<u32>,
    /// Arrival order at ports, the tie-break between equal posting numbers.
    arrivals: u64,
}

impl PortedLinks {
    /// `k` ports per endpoint and direction (k >= 1).
    pub fn new(k: u32) -> Self {
        Self {
            k: k.max(1) as usize,
            ..Self::default()
        }
    }

    fn side(sides: &mut Vec<Side>, k: usize, e: u32) -> &mut Side {
        let i = e as usize;
        if sides.len() <= i {
            sides.resize_with(i + 1, Side::default);
        }
        let side = &mut sides[i];
        if side.free.is_empty() {
            side.free.resize(k, 0.0);
        }
        side
    }

    /// Queues `msg` at side `e` of `sides` (ready at `now`), and a turn of that side in
    /// `turns` if none is due.
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        sides: &mut Vec<Side>,
        turns: &mut Timers<u32>,
        k: usize,
        arrivals: &mut u64,
        e: u32,
        now: Time,
        posted: u64,
        msg: Queued,
    ) {
        *arrivals += 1;
        let side = Self::side(sides, k, e);
        side.waiting.push(Waiting {
            key: Reverse((posted, *arrivals)),
            msg,
        });
        if !side.turn {
            side.turn = true;
            turns.push(side.first_free().1.max(now), e);
        }
    }

    /// A message ready to leave now; its delivery comes through `advance`.
    pub fn submit(&mut self, now: Time, t: &Transfer, costs: Costs) {
        let msg = Queued {
            id: t.id,
            dst: t.dst,
            recv_posted: t.recv_posted,
            costs,
        };
        let Self {
            send,
            send_turns,
            k,
            arrivals,
            ..
        } = self;
        Self::enqueue(
            send,
            send_turns,
            *k,
            arrivals,
            t.src,
            now,
            t.send_posted,
            msg,
        );
    }

    pub fn next_time(&self) -> Option<Time> {
        [
            self.stages.peek_time(),
            self.send_turns.peek_time(),
            self.recv_turns.peek_time(),
        ]
        .into_iter()
        .flatten()
        .min_by(f64::total_cmp)
    }

    /// Endpoint `e`'s send ports start its waiting messages at `t`, lowest send number
    /// first.
    fn send_turn(&mut self, e: u32, t: Time) {
        let Self {
            send,
            recv,
            stages,
            send_turns,
            recv_turns,
            k,
            arrivals,
        } = self;
        let side = &mut send[e as usize];
        side.turn = false;
        while let Some(i) = side.free_at(t) {
            let Some(Waiting { msg, .. }) = side.waiting.pop() else {
                break;
            };
            let c = msg.costs;
            side.free[i] = t + c.send_busy;
            if c.lead > 0.0 {
                stages.push(t + c.lead, Stage::Arrive(msg));
            } else {
                // It reaches its destination's NIC now: queued there at once (the receive
                // turns of this instant come after every send turn).
                let (dst, posted) = (msg.dst, msg.recv_posted);
                Self::enqueue(recv, recv_turns, *k, arrivals, dst, t, posted, msg);
            }
        }
        if !side.waiting.is_empty() {
            side.turn = true;
            send_turns.push(side.first_free().1, e);
        }
    }

    /// Endpoint `e`'s receive ports take its arrived messages at `t`, lowest receive
    /// number first; deliveries due by `now` go to `out`.
    fn recv_turn(&mut self, e: u32, t: Time, now: Time, out: &mut Vec<Delivery>) {
        let side = &mut self.recv[e as usize];
        side.turn = false;
        while let Some(i) = side.free_at(t) {
            let Some(Waiting { msg, .. }) = side.waiting.pop() else {
                break;
            };
            let c = msg.costs;
            side.free[i] = t + c.recv_busy;
            let at = t + c.wire;
            if at <= now {
                out.push(delivery(msg.id, at));
            } else {
                self.stages.push(at, Stage::Deliver(msg.id));
            }
        }
        if !side.waiting.is_empty() {
            side.turn = true;
            self.recv_turns.push(side.first_free().1, e);
        }
    }

    /// Runs the arrivals, turns and deliveries due by `now`.
    pub fn advance(&mut self, now: Time, out: &mut Vec<Delivery>) {
        loop {
            // At one instant: stages, then send turns, then receive turns.
            let times = [
                self.stages.peek_time(),
                self.send_turns.peek_time(),
                self.recv_turns.peek_time(),
            ];
            let Some((which, t)) = times
                .iter()
                .enumerate()
                .filter_map(|(i, t)| t.map(|t| (i, t)))
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            else {
                return;
            };
            if t > now {
                return;
            }
            match which {
                0 => match self.stages.pop_due(now).expect("peeked").1 {
                    Stage::Arrive(msg) => {
                        let (dst, posted) = (msg.dst, msg.recv_posted);
                        let (sides, turns) = (&mut self.recv, &mut self.recv_turns);
                        Self::enqueue(
                            sides,
                            turns,
                            self.k,
                            &mut self.arrivals,
                            dst,
                            t,
                            posted,
                            msg,
                        );
                    }
                    Stage::Deliver(id) => out.push(delivery(id, t)),
                },
                1 => {
                    let e = self.send_turns.pop_due(now).expect("peeked").1;
                    self.send_turn(e, t);
                }
                _ => {
                    let e = self.recv_turns.pop_due(now).expect("peeked").1;
                    self.recv_turn(e, t, now, out);
                }
            }
        }
    }
}

fn delivery(id: TransferId, at: Time) -> Delivery {
    Delivery {
        id,
        at,
        info: TransferInfo::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_come_ports_serve_one_message_at_a_time_in_arrival_order() {
        let mut p = Ports::new(1);
        assert_eq!(p.send(0, 0.0, 10.0), 0.0);
        assert_eq!(p.send(0, 0.0, 10.0), 10.0);
        assert_eq!(p.send(0, 25.0, 10.0), 25.0);
        // another endpoint is independent
        assert_eq!(p.send(1, 0.0, 10.0), 0.0);
        let mut two = Ports::new(2);
        assert_eq!(two.send(3, 0.0, 10.0), 0.0);
        assert_eq!(two.send(3, 0.0, 10.0), 0.0);
        assert_eq!(two.send(3, 0.0, 10.0), 10.0);
    }

    fn msg(id: u32, src: u32, dst: u32, send_posted: u64, recv_posted: u64) -> Transfer {
        Transfer {
            send_posted,
            recv_posted,
            ..Transfer::new(id, src, dst, 8, super::super::Kind::Eager)
        }
    }

    const TEN: Costs = Costs {
        send_busy: 10.0,
        recv_busy: 10.0,
        lead: 0.0,
        wire: 10.0,
    };

    fn run(l: &mut PortedLinks) -> Vec<(u32, f64)> {
        let mut out = Vec::new();
        while let Some(t) = l.next_time() {
            l.advance(t, &mut out);
        }
        out.iter().map(|d| (d.id, d.at)).collect()
    }

    #[test]
    fn a_send_port_serves_same_instant_messages_in_posting_order() {
        let mut l = PortedLinks::new(1);
        // submitted in the order 3, 1, 2 at one instant; posted in the order 1, 2, 3
        l.submit(0.0, &msg(3, 0, 3, 30, 0), TEN);
        l.submit(0.0, &msg(1, 0, 1, 10, 0), TEN);
        l.submit(0.0, &msg(2, 0, 2, 20, 0), TEN);
        assert_eq!(run(&mut l), vec![(1, 10.0), (2, 20.0), (3, 30.0)]);
    }

    #[test]
    fn a_waiting_message_posted_earlier_goes_before_one_that_came_earlier() {
        let mut l = PortedLinks::new(1);
        let mut out = Vec::new();
        l.submit(0.0, &msg(1, 0, 1, 10, 0), TEN);
        l.advance(0.0, &mut out);
        // port busy until 10: 3 (posted 30) comes at 2, 2 (posted 20) at 5
        l.submit(2.0, &msg(3, 0, 3, 30, 0), TEN);
        l.advance(2.0, &mut out);
        l.submit(5.0, &msg(2, 0, 2, 20, 0), TEN);
        assert_eq!(run(&mut l), vec![(1, 10.0), (2, 20.0), (3, 30.0)]);
    }

    #[test]
    fn a_receive_port_serves_by_the_receives_posting_order() {
        let mut l = PortedLinks::new(1);
        // three senders reach 9 at once; 9 posted its receives from 2, then 1, then an
        // unexpected message (receive not posted) from 3 comes last
        l.submit(0.0, &msg(3, 3, 9, 1, u64::MAX), TEN);
        l.submit(0.0, &msg(1, 1, 9, 1, 50), TEN);
        l.submit(0.0, &msg(2, 2, 9, 1, 40), TEN);
        assert_eq!(run(&mut l), vec![(2, 10.0), (1, 20.0), (3, 30.0)]);
    }

    #[test]
    fn receive_ports_are_taken_when_the_data_arrives() {
        let mut l = PortedLinks::new(1);
        let lead = Costs { lead: 30.0, ..TEN };
        // 1 -> 5 leaves at 0 and reaches 5 at 30; 2 -> 5 reaches it at 12 and is done
        // with the port by 22, so 1 -> 5 is not delayed
        l.submit(0.0, &msg(1, 1, 5, 1, 1), lead);
        l.advance(0.0, &mut Vec::new());
        l.submit(2.0, &msg(2, 2, 5, 1, 2), Costs { lead: 10.0, ..TEN });
        assert_eq!(run(&mut l), vec![(2, 22.0), (1, 40.0)]);
    }

    #[test]
    fn two_ports_serve_two_messages_at_once() {
        let mut l = PortedLinks::new(2);
        for id in 0..3 {
            l.submit(0.0, &msg(id, 0, 1 + id, u64::from(id), 0), TEN);
        }
        assert_eq!(run(&mut l), vec![(0, 10.0), (1, 10.0), (2, 20.0)]);
    }
}
