//! Endpoint ports of the contention-free models (α-β, LogGP): each endpoint has `k` send
//! ports and `k` receive ports, each serving one message at a time, first come first
//! served. A message takes a send port when it is ready to leave (its submission), and a
//! receive port of its destination when its data reaches the destination's NIC; a busy
//! port makes it wait for the earliest free one. `k` = 1 is the single-port, full-duplex
//! endpoint of the Hockney model as Pješivac-Grbović et al. (Cluster Computing 10(2),
//! 2007) use it for Open MPI's collectives: one send and one receive in flight per
//! process.
//!
//! Receive ports are taken at the instant the data arrives, not reserved ahead: a message
//! whose send port is still busy takes its receive port only once it has left, so a
//! waiting message never blocks a destination that is idle in between. Those later
//! instants are the models' own timers.

use super::timers::Timers;
use super::{Delivery, Time, TransferId, TransferInfo};

/// Free-at times of every endpoint's ports (grown on demand: these models have no fixed
/// endpoint count).
#[derive(Debug, Default)]
pub struct Ports {
    k: usize,
    send: Vec<Time>,
    recv: Vec<Time>,
}

/// A message between its departure and its delivery.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// Its data reaches the destination: take a receive port for `busy`, deliver `wire`
    /// after the port is free.
    Arrive {
        id: TransferId,
        dst: u32,
        busy: Time,
        wire: Time,
    },
    Deliver(TransferId),
}

/// Ports plus the timers of messages on their way.
#[derive(Debug, Default)]
pub struct PortedLinks {
    pub ports: Ports,
    timers: Timers<Stage>,
}

impl Ports {
    /// `k` ports per endpoint and direction (k >= 1).
    pub fn new(k: u32) -> Self {
        Self {
            k: k.max(1) as usize,
            send: Vec::new(),
            recv: Vec::new(),
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

    /// A message reaching `e` at `ready`, holding a receive port for `busy`.
    pub fn recv(&mut self, e: u32, ready: Time, busy: Time) -> Time {
        Self::take(self.k, &mut self.recv, e, ready, busy)
    }
}

impl PortedLinks {
    pub fn new(k: u32) -> Self {
        Self {
            ports: Ports::new(k),
            timers: Timers::default(),
        }
    }

    /// A message that left at `left` (>= now) reaches `dst`'s NIC `lead` later; it holds a
    /// receive port for `busy` and is delivered `wire` after taking it. Returns its
    /// delivery time when it can be known now (it arrives now), else schedules it.
    #[allow(clippy::too_many_arguments)]
    pub fn arrive(
        &mut self,
        now: Time,
        id: TransferId,
        dst: u32,
        reach: Time,
        busy: Time,
        wire: Time,
    ) -> Option<Time> {
        if reach <= now {
            let start = self.ports.recv(dst, reach, busy);
            return Some(start + wire);
        }
        self.timers.push(
            reach,
            Stage::Arrive {
                id,
                dst,
                busy,
                wire,
            },
        );
        None
    }

    pub fn next_time(&self) -> Option<Time> {
        self.timers.peek_time()
    }

    /// Runs the arrivals and deliveries due by `now`.
    pub fn advance(&mut self, now: Time, out: &mut Vec<Delivery>) {
        while let Some((t, stage)) = self.timers.pop_due(now) {
            match stage {
                Stage::Arrive {
                    id,
                    dst,
                    busy,
                    wire,
                } => {
                    let at = self.ports.recv(dst, t, busy) + wire;
                    if at <= now {
                        out.push(delivery(id, at));
                    } else {
                        self.timers.push(at, Stage::Deliver(id));
                    }
                }
                Stage::Deliver(id) => out.push(delivery(id, t)),
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
    fn a_single_port_serves_one_message_at_a_time_in_arrival_order() {
        let mut p = Ports::new(1);
        assert_eq!(p.send(0, 0.0, 10.0), 0.0);
        assert_eq!(p.send(0, 0.0, 10.0), 10.0);
        assert_eq!(p.send(0, 25.0, 10.0), 25.0);
        // another endpoint and the receive side are independent
        assert_eq!(p.send(1, 0.0, 10.0), 0.0);
        assert_eq!(p.recv(0, 0.0, 10.0), 0.0);
        let mut two = Ports::new(2);
        assert_eq!(two.send(3, 0.0, 10.0), 0.0);
        assert_eq!(two.send(3, 0.0, 10.0), 0.0);
        assert_eq!(two.send(3, 0.0, 10.0), 10.0);
    }

    #[test]
    fn receive_ports_are_taken_when_the_data_arrives() {
        let mut l = PortedLinks::new(1);
        // arrives now: known at once
        assert_eq!(l.arrive(0.0, 1, 5, 0.0, 10.0, 10.0), Some(10.0));
        // arrives at 30: a timer; meanwhile another message arriving at 12 takes the port
        assert_eq!(l.arrive(0.0, 2, 5, 30.0, 10.0, 10.0), None);
        assert_eq!(l.arrive(12.0, 3, 5, 12.0, 10.0, 10.0), Some(22.0));
        let mut out = Vec::new();
        l.advance(30.0, &mut out);
        assert!(out.is_empty());
        assert_eq!(l.next_time(), Some(40.0));
        l.advance(40.0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].id, out[0].at), (2, 40.0));
    }
}
