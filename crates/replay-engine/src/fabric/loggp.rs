//! Contention-free models: α-β(-γ) (Hockney; Thakur, Rabenseifner & Gropp, IJHPCA 2005) and
//! LogGP (Alexandrov, Ionescu, Schauser & Scheiman, SPAA 1995). γ and the host overheads
//! o/O are host costs charged by the engine (config::HostParams), not by the network.

use super::{Fabric, Submitted, Time, TransferId};
use crate::config::LogGpParams;

pub struct LogGpFabric {
    params: LogGpParams,
    /// LogGP only: when each sender's NIC may inject its next message (gap g, G per byte).
    nic_free: Vec<Time>,
}

impl LogGpFabric {
    pub fn new(params: LogGpParams) -> Result<Self, String> {
        let values = match params {
            LogGpParams::AlphaBeta {
                alpha_ns,
                beta_ns_per_byte,
            } => vec![alpha_ns, beta_ns_per_byte],
            LogGpParams::LogGp {
                l_ns,
                g_ns,
                g_ns_per_byte,
            } => vec![l_ns, g_ns, g_ns_per_byte],
        };
        if values.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err("loggp parameters must be finite and >= 0".into());
        }
        Ok(Self {
            params,
            nic_free: Vec::new(),
        })
    }
}

impl Fabric for LogGpFabric {
    fn name(&self) -> &'static str {
        "loggp"
    }

    fn endpoints(&self) -> Option<u32> {
        None
    }

    fn route(&mut self, _src: u32, _dst: u32, links: &mut Vec<u32>) {
        links.clear();
    }

    fn control_latency(&mut self, _src: u32, _dst: u32) -> Time {
        match self.params {
            LogGpParams::AlphaBeta { alpha_ns, .. } => alpha_ns,
            LogGpParams::LogGp { l_ns, .. } => l_ns,
        }
    }

    fn submit(&mut self, now: Time, _id: TransferId, src: u32, _dst: u32, bytes: u64) -> Submitted {
        match self.params {
            // Exactly α + nβ: the closed forms of Thakur et al. assume nothing else.
            LogGpParams::AlphaBeta {
                alpha_ns,
                beta_ns_per_byte,
            } => Submitted::At(now + alpha_ns + bytes as f64 * beta_ns_per_byte),
            // LogGP: the NIC is busy max(g, (n-1)G); the last byte lands L after injection.
            LogGpParams::LogGp {
                l_ns,
                g_ns,
                g_ns_per_byte,
            } => {
                let s = src as usize;
                if self.nic_free.len() <= s {
                    self.nic_free.resize(s + 1, 0.0);
                }
                let start = now.max(self.nic_free[s]);
                let wire = bytes.saturating_sub(1) as f64 * g_ns_per_byte;
                self.nic_free[s] = start + wire.max(g_ns);
                Submitted::At(start + wire + l_ns)
            }
        }
    }

    fn next_time(&mut self) -> Option<Time> {
        None
    }

    fn advance(&mut self, _now: Time, _delivered: &mut Vec<(TransferId, Time)>) {}

    fn alpha_beta(&self) -> Option<(f64, f64)> {
        match self.params {
            LogGpParams::AlphaBeta {
                alpha_ns,
                beta_ns_per_byte,
            } => Some((alpha_ns, beta_ns_per_byte)),
            LogGpParams::LogGp { .. } => None, // the NIC gap makes it stateful
        }
    }

    fn holds_transfers(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_beta_costs_alpha_plus_n_beta() {
        let mut f = LogGpFabric::new(LogGpParams::AlphaBeta {
            alpha_ns: 1000.0,
            beta_ns_per_byte: 1.0,
        })
        .unwrap();
        assert_eq!(f.submit(5.0, 0, 0, 1, 8), Submitted::At(1013.0));
        // No sender serialization in the α-β form.
        assert_eq!(f.submit(5.0, 1, 0, 2, 8), Submitted::At(1013.0));
    }

    #[test]
    fn loggp_serializes_injection_at_the_sender() {
        let p = LogGpParams::LogGp {
            l_ns: 100.0,
            g_ns: 50.0,
            g_ns_per_byte: 2.0,
        };
        let mut f = LogGpFabric::new(p).unwrap();
        assert_eq!(f.submit(0.0, 0, 0, 1, 11), Submitted::At(20.0 + 100.0));
        // The NIC is busy until max(g, 20) = 50.
        assert_eq!(f.submit(0.0, 1, 0, 2, 1), Submitted::At(50.0 + 100.0));
        assert_eq!(f.submit(0.0, 2, 3, 2, 1), Submitted::At(100.0));
    }
}
