//! A channel-reservation network: the shared state of the circuit-switched photonic models.
//! Every link has a number of channels (the WDM channels of a photonic link, or one for a
//! broadband-switched waveguide that carries a whole circuit); circuit protocols reserve
//! them hop by hop while they route ([`HopGraph`]), wait in a per-link FIFO when a link has
//! no free channel, and are woken when one frees. Channel time is accounted as reserved
//! (held by a circuit, setup included) and as carrying data, for utilisation.

use std::collections::VecDeque;

use crate::fabric::Time;

/// Where a reservation walk stands: an endpoint's interface or a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum At {
    Endpoint(u32),
    Switch(u32),
}

/// A topology that reservation protocols walk one hop at a time (they route while they
/// reserve, so adaptive choices see which links have free channels).
pub trait HopGraph {
    fn endpoints(&self) -> u32;
    fn switches(&self) -> u32;
    fn links(&self) -> u32;
    /// Appends the links leaving `at` towards endpoint `dst`, each with where it leads;
    /// the deterministic route's choice first, then the alternatives of an adaptive one.
    /// Nothing when `at` is `Endpoint(dst)`.
    fn hop_options(&self, at: At, dst: u32, out: &mut Vec<(u32, At)>);
    /// Links on the route from `src` to `dst` (control messages travel it).
    fn hops(&self, src: u32, dst: u32) -> u32;
    /// The switch an endpoint shares a router with (direct networks such as the torus).
    fn home_switch(&self, _endpoint: u32) -> Option<u32> {
        None
    }
    /// Whether the link joins an endpoint to its switch (injection or ejection).
    fn is_endpoint_link(&self, link: u32) -> bool;
    /// A reservation walk from `at` towards `dst`: appends to `walk` the hops it takes while
    /// a link is `free`, at an adaptive hop the first free option; returns the link that
    /// stopped it (the deterministic choice there), or None once it reached `dst`. `opts` is
    /// scratch. A topology may override it with a faster walk taking the same hops.
    fn walk_free(
        &self,
        at: At,
        dst: u32,
        free: impl Fn(u32) -> bool,
        opts: &mut Vec<(u32, At)>,
        walk: &mut Vec<(u32, At)>,
    ) -> Option<u32>
    where
        Self: Sized,
    {
        walk_by_options(self, at, dst, free, opts, walk)
    }
}

/// [`HopGraph::walk_free`] one `hop_options` call per hop.
pub fn walk_by_options<G: HopGraph + ?Sized>(
    graph: &G,
    at: At,
    dst: u32,
    free: impl Fn(u32) -> bool,
    opts: &mut Vec<(u32, At)>,
    walk: &mut Vec<(u32, At)>,
) -> Option<u32> {
    let mut cur = at;
    loop {
        graph.hop_options(cur, dst, opts);
        let &(first, _) = opts.first()?;
        match opts.iter().find(|o| free(o.0)) {
            Some(&hop) => {
                walk.push(hop);
                cur = hop.1;
            }
            None => return Some(first),
        }
    }
}

/// Channel state of every link, FIFO waiters of type `T`, and channel-time counters.
///
/// Waking protocol: `give` frees a channel and hands out at most as many waiters as there
/// are free channels not already promised (`waking`); a woken waiter calls `woke` when its
/// retry starts and `pump` when it is over, so a wake it did not use passes to the next
/// waiter and no waiter sleeps on a link with a free channel.
#[derive(Debug, Clone)]
pub struct ChannelNet<T> {
    capacity: Vec<u16>,
    free: Vec<u16>,
    waking: Vec<u16>,
    waiters: Vec<VecDeque<T>>,
    /// Channel-ns held: minus the take time plus the give time of every reservation.
    reserved_ns: Vec<f64>,
    /// Channel-ns carrying data.
    data_ns: Vec<f64>,
}

impl<T: Copy> ChannelNet<T> {
    pub fn new(capacity: Vec<u16>) -> Self {
        let n = capacity.len();
        Self {
            free: capacity.clone(),
            capacity,
            waking: vec![0; n],
            waiters: (0..n).map(|_| VecDeque::new()).collect(),
            reserved_ns: vec![0.0; n],
            data_ns: vec![0.0; n],
        }
    }

    pub fn links(&self) -> usize {
        self.capacity.len()
    }

    #[inline]
    pub fn free(&self, link: u32) -> u16 {
        self.free[link as usize]
    }

    pub fn capacity(&self, link: u32) -> u16 {
        self.capacity[link as usize]
    }

    /// Takes a free channel of `link` at `now` (the caller checked `free > 0`).
    #[inline]
    pub fn take(&mut self, link: u32, now: Time) {
        let l = link as usize;
        debug_assert!(self.free[l] > 0, "link {link} has no free channel");
        self.free[l] -= 1;
        self.reserved_ns[l] -= now;
    }

    /// Frees a channel of `link` at `now`; waiters it wakes are appended to `woken`.
    #[inline]
    pub fn give(&mut self, link: u32, now: Time, woken: &mut Vec<(u32, T)>) {
        let l = link as usize;
        debug_assert!(self.free[l] < self.capacity[l], "link {link} over-freed");
        self.free[l] += 1;
        self.reserved_ns[l] += now;
        self.pump(link, woken);
    }

    /// A channel of `link` taken and given back at `now` by a walk that did not keep it: it
    /// wakes nobody (no waiter sleeps on a link with a free channel), only the reserved
    /// time's accounting sees the pair (`- now + now`: the float rounding of a take followed
    /// by a release, so results stay bit-identical to doing both).
    #[inline]
    pub fn take_and_give(&mut self, link: u32, now: Time) {
        let l = link as usize;
        self.reserved_ns[l] = self.reserved_ns[l] - now + now;
    }

    /// Queues `token` until a channel of `link` frees.
    pub fn wait(&mut self, link: u32, token: T) {
        self.waiters[link as usize].push_back(token);
    }

    /// A waiter woken from `link` starts its retry.
    pub fn woke(&mut self, link: u32) {
        let w = &mut self.waking[link as usize];
        debug_assert!(*w > 0);
        *w -= 1;
    }

    /// Hands free channels of `link` to waiters (as (link, token) pairs in `woken`).
    pub fn pump(&mut self, link: u32, woken: &mut Vec<(u32, T)>) {
        let l = link as usize;
        while self.free[l] > self.waking[l] {
            let Some(token) = self.waiters[l].pop_front() else {
                break;
            };
            self.waking[l] += 1;
            woken.push((link, token));
        }
    }

    /// Records `ns` of one channel of `link` carrying data.
    #[inline]
    pub fn add_data(&mut self, link: u32, ns: f64) {
        self.data_ns[link as usize] += ns;
    }

    /// Waiters queued on all links.
    pub fn waiting(&self) -> usize {
        self.waiters.iter().map(VecDeque::len).sum()
    }

    /// Channels held now, over all links.
    pub fn held(&self) -> u64 {
        self.capacity
            .iter()
            .zip(&self.free)
            .map(|(&c, &f)| u64::from(c - f))
            .sum()
    }

    /// (share of channel time carrying data, share reserved) of `link` over [0, horizon].
    pub fn utilisation(&self, link: u32, horizon: Time) -> (f64, f64) {
        let l = link as usize;
        let cap = f64::from(self.capacity[l]) * horizon;
        if cap <= 0.0 {
            return (0.0, 0.0);
        }
        let open = f64::from(self.capacity[l] - self.free[l]) * horizon;
        (self.data_ns[l] / cap, (self.reserved_ns[l] + open) / cap)
    }
}

/// `q`-quantiles (0, 1/q, …, 1) of `values` (sorted in place; empty gives nothing).
pub fn quantiles(values: &mut [f64], q: usize) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    values.sort_by(f64::total_cmp);
    let last = values.len() - 1;
    (0..=q).map(|i| values[(i * last + q / 2) / q]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_channel_wakes_one_waiter_and_an_unused_wake_passes_on() {
        let mut net: ChannelNet<u32> = ChannelNet::new(vec![1, 2]);
        let mut woken = Vec::new();
        net.take(0, 0.0);
        net.wait(0, 7);
        net.wait(0, 8);
        net.give(0, 10.0, &mut woken);
        assert_eq!(woken, vec![(0, 7)]);
        // 7 retries but takes another route: its wake goes to 8.
        woken.clear();
        net.woke(0);
        net.pump(0, &mut woken);
        assert_eq!(woken, vec![(0, 8)]);
        net.woke(0);
        net.take(0, 10.0);
        net.give(0, 30.0, &mut woken);
        // Held 0..10 and 10..30 of 30 ns: fully reserved, no data recorded.
        assert_eq!(net.utilisation(0, 30.0), (0.0, 1.0));
        net.add_data(1, 15.0);
        assert_eq!(net.utilisation(1, 30.0), (0.25, 0.0));
        assert_eq!(net.waiting(), 0);
        assert_eq!(net.held(), 0);
    }

    #[test]
    fn quantiles_span_min_to_max() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0, 5.0];
        assert_eq!(quantiles(&mut v, 4), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!(quantiles(&mut [], 4).is_empty());
    }
}
