//! Token-bucket output ports: a link behind a shaper with Linux htb's packet rule, for the
//! levels of a topology that declare a bucket (`burst_bytes`, `peak_bandwidth_gbps` over
//! the level's rate).
//!
//! **htb** (net/sched/sch_htb.c): a class may dequeue a packet while its tokens are ≥ 0
//! (`htb_class_mode`: `toks = cl->tokens + diff`, CAN_SEND when `toks >= htb_hiwater(cl)`,
//! which is 0 unless the `htb_hysteresis` module parameter is set); tokens accrue at the
//! class's rate for the time elapsed, capped at the burst, and dequeuing charges the whole
//! packet's transmission time at the rate, so the count may go negative
//! (`htb_charge_class` → `htb_accnt_tokens`). A class in debt sends nothing until its
//! tokens are back at 0 (its watchdog fires then). The packet itself leaves at the device's
//! speed: here it is serialised at the port's peak rate. So after idle a port passes its
//! burst plus one packet (whatever its size) at the peak, then packets at the rate on
//! average, each leaving whole once the debt of the one before is repaid.
//!
//! (tbf, sch_tbf.c, instead holds a packet until the tokens cover all of it: not modelled
//! here. A tree level's `max_packet_bytes`, the flow engine's stand-in for the packet htb
//! lets overdraw, has no place here: the packets are the engine's own.)
//!
//! Tokens are kept as the instant `zero_at` at which they were (or will be) 0, refilling
//! without the cap since: tokens(t) = min(burst, rate·(t − zero_at)). A port may send at t
//! iff t ≥ zero_at — one comparison, exact, with no rounding of a token count near 0.

use crate::fabric::flow::network::LinkClasses;
use crate::fabric::Time;

/// The shaper of one output port.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shaper {
    /// The sustained rate tokens accrue at, and the burst they are capped at (bytes per ns,
    /// bytes).
    rate: f64,
    burst: f64,
    /// When the tokens were (will be) 0; −∞: a full bucket.
    zero_at: Time,
}

impl Shaper {
    /// A full bucket of `burst` bytes refilling at `rate` bytes per ns.
    pub fn new(rate: f64, burst: f64) -> Self {
        debug_assert!(rate > 0.0 && burst >= 0.0);
        Self {
            rate,
            burst,
            zero_at: f64::NEG_INFINITY,
        }
    }

    /// Per link, the shaper of its class and its serialisation rate (the class's peak when
    /// shaped, its capacity otherwise); no shapers (an empty vector) when no class has a
    /// bucket.
    pub fn of_links(classes: &LinkClasses) -> (Vec<Option<Shaper>>, Vec<f64>) {
        let of = |c: u8| classes.buckets.get(usize::from(c)).copied().flatten();
        let shapers = if classes.buckets.iter().any(Option::is_some) {
            classes
                .of_link
                .iter()
                .map(|&c| {
                    of(c).map(|b| Shaper::new(classes.capacity[usize::from(c)], b.depth_bytes))
                })
                .collect()
        } else {
            Vec::new()
        };
        let rate = classes
            .of_link
            .iter()
            .map(|&c| of(c).map_or(classes.capacity[usize::from(c)], |b| b.peak))
            .collect();
        (shapers, rate)
    }

    /// Whether a packet may start at `t` (tokens ≥ 0).
    pub fn open(&self, t: Time) -> bool {
        t >= self.zero_at
    }

    /// Tokens at `t` (bytes; negative: debt).
    pub fn tokens(&self, t: Time) -> f64 {
        if self.zero_at == f64::NEG_INFINITY {
            return self.burst;
        }
        (self.rate * (t - self.zero_at)).min(self.burst)
    }

    /// Charges a packet of `bytes` that starts at `t` (the port is open): returns when the
    /// tokens are back at 0 (≤ t when the packet fits in them).
    pub fn charge(&mut self, t: Time, bytes: u32) -> Time {
        debug_assert!(self.open(t), "a packet started on a shaped port in debt");
        let left = self.tokens(t) - f64::from(bytes);
        self.zero_at = t - left / self.rate;
        self.zero_at
    }
}

#[cfg(test)]
mod tests {
    use super::Shaper;

    /// 0.1 B/ns (0.8 Gbit/s), burst 1000 B.
    fn shaper() -> Shaper {
        Shaper::new(0.1, 1000.0)
    }

    #[test]
    fn a_full_bucket_sends_any_packet_and_owes_the_rest() {
        let mut s = shaper();
        assert!(s.open(0.0));
        assert_eq!(s.tokens(0.0), 1000.0);
        // 3000 B with 1000 B of tokens: 2000 B of debt, repaid at 0.1 B/ns.
        assert_eq!(s.charge(0.0, 3000), 20_000.0);
        assert!(!s.open(19_999.0) && s.open(20_000.0));
        assert_eq!(s.tokens(10_000.0), -1000.0);
    }

    #[test]
    fn a_packet_within_the_tokens_leaves_the_port_open() {
        let mut s = shaper();
        // 400 B of 1000: 600 left, as if the tokens were 0 at -6000 ns.
        assert_eq!(s.charge(0.0, 400), -6000.0);
        assert!(s.open(0.0));
        assert_eq!(s.tokens(2000.0), 800.0);
        // The refill stops at the burst.
        assert_eq!(s.tokens(1e6), 1000.0);
    }

    #[test]
    fn tokens_refill_at_the_rate_up_to_the_burst_between_packets() {
        let mut s = shaper();
        s.charge(0.0, 1500); // 500 B of debt: open again at 5000 ns
                             // At 8000 ns the bucket holds 300 B: a 300 B packet leaves it at 0, open.
        assert_eq!(s.charge(8000.0, 300), 8000.0);
        // Long idle refills to the burst only: the next 1000 B packet leaves 0.
        assert_eq!(s.charge(1e9, 1000), 1e9);
        // Zero burst: every packet leaves at 0 tokens and owes all of itself.
        let mut z = Shaper::new(0.1, 0.0);
        assert_eq!(z.charge(0.0, 100), 1000.0);
    }
}
