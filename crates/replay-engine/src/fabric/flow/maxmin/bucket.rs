//! Token-bucket links: a link behind a shaper that passes bytes at a peak rate while its
//! bucket holds tokens and at its own rate once the bucket is empty (a fluid version of
//! Linux's `htb` and `tbf` shapers).
//!
//! **What a shaper does** (Linux, net/sched/sch_htb.c): a class may dequeue while its token
//! count is non-negative (`htb_class_mode`: `cl->tokens + diff >= htb_hiwater(cl)`, and
//! `htb_hiwater` is 0 unless the `htb_hysteresis` module parameter is set); it then charges
//! the whole packet (`htb_charge_class` → `htb_accnt_tokens`: tokens accrue at the rate for
//! the time elapsed, capped at the burst, then lose the packet's transmission time at the
//! rate, floored only at −60 s of debt, `mbuffer`). So after an idle period `burst` bytes
//! pass at the device's speed, plus the packet that starts while tokens are still ≥ 0: with
//! GSO that packet can be a super-packet of up to the device's `gso_max_size`
//! (net/ipv4/tcp.c `tcp_xmit_size_goal`; `tcp_tso_autosize` grants the whole of it when
//! the minimum RTT is below 2^`tcp_tso_rtt_log` µs), charged at its full length
//! (`qdisc_pkt_len`). tbf (sch_tbf.c) instead refuses a packet it lacks tokens for.
//!
//! **Fluid model** (this file): a bucket of `depth` bytes (the configured burst). While it
//! holds tokens T > 0 the link offers its `peak` capacity; T changes at `rate − load` (load
//! = Σ rates of its flows), capped at `depth`. When T reaches 0 with flows on the link, the
//! packet then in flight is charged whole: the link stays at `peak` until T reaches
//! −q, q = the most bytes any of its flows has left, at most `packet` (a message smaller
//! than a super-packet is its own and overdraws only its size; a longer one overdraws one
//! super-packet). Then the capacity falls to `rate`, T stays at −q while the link is
//! saturated and rises while it is under-used; reaching 0 ends the debt. Both drops are
//! timed events like a drain. A bucket that refills while its link is under-used offers
//! `peak` again from the next re-solve that reads the link (until then the link is not
//! saturated, so no flow's rate depends on which of the two it offers).
//!
//! **Not modelled**: packets. A message arriving while htb is in debt (T < 0) waits for
//! T ≥ 0 and then leaves whole at device speed; here it leaves at `rate` at once (the same
//! bytes by the time the debt is repaid, but no wait-then-burst shape). So a message longer
//! than one packet but shorter than burst + packet passes whole at the peak here, where htb
//! holds its second packet until the first one's debt is repaid (65,544 B after idle on one
//! 100 Mbit/s htb link of the lab's layout, 9000 B MTU: 3.0 ms measured; here ~50 µs).
//! Flows share the peak max-min fairly where htb's FIFO serves packets in turn. The reverse
//! direction's ACKs, which htb charges to the same class, are not counted.

use super::{MaxMin, EPS};

/// A token bucket in front of a link (bytes, bytes per ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    /// Bytes the full bucket holds: the shaper's burst.
    pub depth_bytes: f64,
    /// The largest packet the shaper charges at once, its overdraft (module comment); 0
    /// for the packet engine, whose shapers charge its own packets (packet/shaper.rs).
    pub packet_bytes: f64,
    /// Bytes per ns the link passes while the bucket holds tokens (> the link's rate).
    pub peak: f64,
}

/// A bucketed link's state: tokens at `at`, and when they run out at the current load.
#[derive(Debug, Clone)]
pub(super) struct Bucket {
    /// The link's sustained rate (its capacity once the bucket is empty), bytes/ns.
    rate: f64,
    peak: f64,
    depth: f64,
    packet: f64,
    tokens: f64,
    /// The debt the packet in flight may run up, ≤ 0: 0 until T first reaches 0, then −q
    /// until T is back at 0 (module comment).
    floor: f64,
    at: f64,
    /// When the tokens reach `floor` at the load since `at` (infinite: they do not).
    empty_at: f64,
}

impl MaxMin {
    /// Puts a full token bucket in front of link `link` (whose capacity so far is its
    /// sustained rate); call before the first flow.
    pub fn set_bucket(&mut self, link: u32, bucket: TokenBucket) {
        let l = link as usize;
        if self.buckets.is_empty() {
            self.buckets = vec![None; self.links.len()];
        }
        let rate = self.links[l].capacity;
        debug_assert!(bucket.peak > rate && bucket.depth_bytes + bucket.packet_bytes > 0.0);
        self.buckets[l] = Some(Bucket {
            rate,
            peak: bucket.peak,
            depth: bucket.depth_bytes,
            packet: bucket.packet_bytes,
            tokens: bucket.depth_bytes,
            floor: 0.0,
            at: 0.0,
            empty_at: f64::INFINITY,
        });
        self.links[l].capacity = bucket.peak;
    }

    /// Tokens of a bucketed link at its last accounting (tests).
    #[cfg(test)]
    pub(super) fn tokens(&self, link: u32) -> Option<f64> {
        self.buckets.get(link as usize)?.as_ref().map(|b| b.tokens)
    }

    /// Earliest time a bucket runs empty at the current rates (call after `settle`).
    pub fn next_bucket_empty(&self) -> Option<f64> {
        self.empties.peek().map(|e| e.0)
    }

    /// Earliest change of the rates: a drain or a bucket running empty.
    pub fn next_event(&self) -> Option<f64> {
        match (self.next_finish(), self.next_bucket_empty()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Every bucket that runs empty at or before `now` either starts the overdraft of the
    /// packet in flight (its link stays at the peak) or, once that is spent too, drops its
    /// link to the link's rate; the next `settle` re-rates every flow on it.
    pub fn empty_buckets(&mut self, now: f64) {
        while let Some((t, l)) = self.empties.peek() {
            if t > now {
                break;
            }
            self.empties.remove(l);
            self.account_bucket(l, t);
            let b = self.buckets[l as usize].as_ref().expect("bucketed link");
            if b.floor == 0.0 && b.packet > 0.0 {
                // At least a byte: a debt of 0 would drop the link and, its tokens at 0,
                // re-open it at the same instant.
                let q = self.bytes_left_at(l, t).min(b.packet).max(1.0);
                let b = self.buckets[l as usize].as_mut().expect("bucketed link");
                b.tokens = 0.0;
                b.floor = -q;
                self.schedule_bucket(l, t);
                continue;
            }
            let b = self.buckets[l as usize].as_mut().expect("bucketed link");
            b.tokens = b.floor;
            b.empty_at = f64::INFINITY;
            self.links[l as usize].capacity = b.rate;
            self.shrunk.push(l);
            self.dirty.push(l);
        }
    }

    /// The most bytes any flow on link `l` has left at `now`.
    fn bytes_left_at(&self, l: u32, now: f64) -> f64 {
        self.links[l as usize]
            .flows(l, &self.spill)
            .map(|f| {
                let f = &self.flows[f as usize];
                f.remaining - f.rate * (now - f.updated_at)
            })
            .fold(0.0, f64::max)
    }

    /// Σ committed rates of the flows on link `l`.
    fn load(&self, l: u32) -> f64 {
        self.links[l as usize]
            .flows(l, &self.spill)
            .map(|f| self.flows[f as usize].rate)
            .sum()
    }

    /// Brings link `l`'s tokens (if it has a bucket) to `now` under the load since its last
    /// accounting. Every change of the load calls it first, so that load held throughout.
    pub(super) fn account_bucket(&mut self, l: u32, now: f64) {
        let Some(Some(b)) = self.buckets.get(l as usize) else {
            return;
        };
        if now <= b.at {
            return;
        }
        let load = self.load(l);
        let b = self.buckets[l as usize].as_mut().expect("bucketed link");
        // A link saturated at its rate gains nothing: rounding of the load's sum must not
        // leave it crumbs of tokens (each would briefly re-open the peak).
        let net = b.rate - load;
        let net = if net.abs() <= EPS * b.rate { 0.0 } else { net };
        b.tokens = if now >= b.empty_at {
            b.floor
        } else {
            (b.tokens + net * (now - b.at)).clamp(b.floor, b.depth)
        };
        if b.tokens >= 0.0 {
            b.floor = 0.0; // the debt is repaid
        }
        b.at = now;
    }

    /// Before a filling round reads the capacities of the links S uses: a bucketed link
    /// that has tokens again (it refilled while under-used) offers its peak.
    pub(super) fn refill_buckets(&mut self, now: f64) {
        for i in 0..self.scratch.s_links.len() {
            let l = self.scratch.s_links[i];
            self.account_bucket(l, now);
            if let Some(Some(b)) = self.buckets.get(l as usize) {
                // htb sends while T >= 0 (a bucket without burst opens at 0 too)
                if b.tokens > 0.0 || (b.packet > 0.0 && b.floor == 0.0 && b.tokens >= 0.0) {
                    self.links[l as usize].capacity = b.peak;
                }
            }
        }
    }

    /// After the load of link `l` changed at `now` (its tokens accounted up to `now`
    /// under the old one): when its bucket runs empty under the new load.
    pub(super) fn schedule_bucket(&mut self, l: u32, now: f64) {
        let Some(Some(b)) = self.buckets.get(l as usize) else {
            return;
        };
        debug_assert!(
            b.at == now,
            "bucket of link {l} accounted at {} not {now}",
            b.at
        );
        let (left, rate) = (b.tokens - b.floor, b.rate);
        let draining = self.links[l as usize].capacity > rate;
        let load = self.load(l);
        let t = if !draining {
            f64::INFINITY // already at its rate
        } else if left <= 0.0 {
            now // ran out at this very instant: the drop is still due
        } else if load > rate * (1.0 + EPS) {
            now + left / (load - rate)
        } else {
            f64::INFINITY
        };
        self.buckets[l as usize]
            .as_mut()
            .expect("bucketed link")
            .empty_at = t;
        if t.is_finite() {
            self.empties.set(l, t);
        } else {
            self.empties.remove(l);
        }
    }

    /// After a commit at `now`: the links S uses have new loads (`refill_buckets` accounted
    /// their tokens up to `now` under the old ones).
    pub(super) fn schedule_buckets(&mut self, now: f64) {
        for i in 0..self.scratch.s_links.len() {
            self.schedule_bucket(self.scratch.s_links[i], now);
        }
    }
}
