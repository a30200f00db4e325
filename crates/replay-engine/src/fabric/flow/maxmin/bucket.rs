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
//! **Fluid model** (this file): a bucket of `depth` bytes = the configured burst plus the
//! largest packet the shaper charges at once. While it holds tokens T > 0 the link offers
//! its `peak` capacity; T changes at `rate − load` (load = Σ rates of its flows), capped at
//! `depth`; when T reaches 0 the capacity falls to `rate`, a timed event like a drain. A
//! bucket that refills while its link is under-used offers `peak` again from the next
//! re-solve that reads the link (until then the link is not saturated, so no flow's rate
//! depends on which of the two it offers).
//!
//! **Not modelled**: packets. A message arriving while htb is in debt (−packet < T < 0)
//! waits for T ≥ 0 and then leaves whole at device speed; here it leaves at `rate` at once
//! (the same bytes by the time the debt is repaid, but no wait-then-burst shape). The
//! overdraft is the largest packet, not the packet actually in flight (a smaller message is
//! its own super-packet and overdraws less). The reverse direction's ACKs, which htb charges
//! to the same class, are not counted.

use super::{MaxMin, EPS};

/// A token bucket in front of a link (bytes, bytes per ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucket {
    /// Bytes the full bucket holds: the shaper's burst plus the largest packet it charges
    /// at once (see the module comment); the burst alone for the packet engine, whose
    /// shapers charge its own packets (packet/shaper.rs).
    pub depth_bytes: f64,
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
    tokens: f64,
    at: f64,
    /// When the tokens reach 0 at the load since `at` (infinite: they do not).
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
        debug_assert!(bucket.peak > rate && bucket.depth_bytes > 0.0);
        self.buckets[l] = Some(Bucket {
            rate,
            peak: bucket.peak,
            depth: bucket.depth_bytes,
            tokens: bucket.depth_bytes,
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

    /// Every bucket that runs empty at or before `now` drops its link to the link's rate;
    /// the next `settle` re-rates every flow on it.
    pub fn empty_buckets(&mut self, now: f64) {
        while let Some((t, l)) = self.empties.peek() {
            if t > now {
                break;
            }
            self.empties.remove(l);
            self.account_bucket(l, t);
            let b = self.buckets[l as usize].as_mut().expect("bucketed link");
            b.tokens = 0.0;
            b.empty_at = f64::INFINITY;
            self.links[l as usize].capacity = b.rate;
            self.shrunk.push(l);
            self.dirty.push(l);
        }
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
            0.0
        } else {
            (b.tokens + net * (now - b.at)).clamp(0.0, b.depth)
        };
        b.at = now;
    }

    /// Before a filling round reads the capacities of the links S uses: a bucketed link
    /// that has tokens again (it refilled while under-used) offers its peak.
    pub(super) fn refill_buckets(&mut self, now: f64) {
        for i in 0..self.scratch.s_links.len() {
            let l = self.scratch.s_links[i];
            self.account_bucket(l, now);
            if let Some(Some(b)) = self.buckets.get(l as usize) {
                if b.tokens > 0.0 {
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
        let (tokens, rate, draining) = (b.tokens, b.rate, self.links[l as usize].capacity > b.rate);
        let load = self.load(l);
        let t = if !draining {
            f64::INFINITY // already at its rate
        } else if tokens <= 0.0 {
            now // ran out at this very instant: the drop is still due
        } else if load > rate * (1.0 + EPS) {
            now + tokens / (load - rate)
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
