//! Host noise: the detours (daemons, interrupts, other processes on the core) during which
//! a rank's process does not run. Declared once, as the `[host.noise]` table of the host
//! model, off unless given.
//!
//! The model, per rank: in wall-clock time the process alternately runs for an exponential
//! time of rate λ and is away for one detour, whose length is drawn from the profile. So
//! in `W` ns of CPU work, detours arrive as a Poisson process of rate λ (per ns the process
//! runs): the work ends after `W` plus the lengths of Poisson(λW) detours (mean stretch
//! 1 + λ·E[length], no detour with probability exp(-λW)), which is what a fixed-work-quantum
//! loop (FWQ) measures: detours per unit of undisturbed work, and their lengths. Each
//! rank draws its detours from its own stream, derived from the replay's seed.
//!
//! Where detours act (LogGOPSim: Hoefler, Schneider & Lumsdaine, "Characterizing the
//! Influence of System Noise on Large-Scale Applications by Simulation", SC 2010; its
//! `Noise::get_noise(rank, start, end)` in spcl/LogGOPSim src/LogGOPSim/Noise.hpp, charged
//! for local operations and for the overhead o at send and at receive): CPU work (compute
//! gaps, the send overhead o + nO, a collective's reduction γ) is stretched by the detours
//! that fall into it, and — with `during_waits`, the default — a rank that comes back from
//! waiting in an MPI call while a detour is in progress continues when it ends (LogGOPSim's
//! detour in progress at the start of the receive overhead). Detours that begin and end
//! while a rank waits cost nothing, as on a real machine. The receive overhead itself is
//! charged when the data arrives, ahead of the receiver's own time, so only that check at
//! its return covers it (a detour shorter than o inside it is missed). Unlike LogGOPSim, detours that
//! arrive during the time a detour added are counted too (the work really is interrupted
//! again), and detours are drawn, not read from a recorded trace at a random offset.
//!
//! Profiles (TOML, as the agent writes them):
//!
//! ```toml
//! [host.noise]            # measured: a fixed-work-quantum loop's detours
//! kind = "empirical"
//! work_ns = 1.0e9         # the loop's undisturbed run time (quanta x quantum length)
//! detours_ns = [12000.0, 9500.0, 250000.0]   # every detour it saw, in ns
//!
//! [host.noise]            # fitted: Poisson arrivals, lengths from a family
//! kind = "poisson"
//! rate_per_s = 100.0      # detours per second of undisturbed run time
//! length = "lognormal"    # constant | exponential | lognormal
//! length_ns = 20000.0     # mean length
//! length_sigma = 1.0      # lognormal shape (std. dev. of ln length)
//!
//! [host.noise.extra]      # optional: a second, independent Poisson source (other
//! rate_per_s = 2000.0     # processes sharing the cores), lengths from its own family
//! length = "lognormal"
//! length_ns = 5000.0
//! ```
//!
//! Two independent Poisson sources are one of the summed rate whose lengths come from the
//! first family with probability rate₁ / (rate₁ + rate₂), else from the second.

use std::collections::VecDeque;

use crate::fabric::schema::{Config, DefaultValue, Param, Type};
use crate::fabric::Time;
use crate::prng::SplitMix64;

/// A host's detours: how often (per ns the process runs) and how long.
#[derive(Debug, Clone, PartialEq)]
pub struct HostNoise {
    /// λ: detours per ns of undisturbed run time.
    pub rate_per_ns: f64,
    pub lengths: Lengths,
    /// A rank returning from a wait during a detour continues at its end.
    pub during_waits: bool,
}

/// The distribution of detour lengths, ns.
#[derive(Debug, Clone, PartialEq)]
pub enum Lengths {
    Constant(f64),
    Exponential {
        mean: f64,
    },
    /// exp(N(mu, sigma²)).
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    /// Each recorded length equally likely.
    Empirical(Vec<f64>),
    /// Two sources' lengths (`[host.noise.extra]`).
    Mixture(Box<Mixture>),
}

/// The lengths of two Poisson sources taken as one: from `first` with probability
/// `first_share` (its share of the summed rate), else from `second`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixture {
    first_share: f64,
    first: Lengths,
    second: Lengths,
}

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

const DURING_WAITS: Param = Param {
    key: "during_waits",
    ty: Type::Bool,
    default: DefaultValue::Bool(true),
    doc: "a rank coming back from a wait in an MPI call during a detour continues at its end (LogGOPSim); false: detours only stretch CPU work",
};

const EMPIRICAL: &[Param] = &[
    Param {
        key: "work_ns",
        ty: Type::Float {
            min: 1.0,
            max: f64::INFINITY,
        },
        default: DefaultValue::Required,
        doc: "undisturbed run time of the profiling loop (quanta x quantum length); detours per ns = len(detours_ns) / work_ns",
    },
    Param {
        key: "detours_ns",
        ty: Type::FloatList {
            min: 0.0,
            max: f64::INFINITY,
            len: (1, usize::MAX),
        },
        default: DefaultValue::Required,
        doc: "length of every detour the loop saw, ns (each equally likely)",
    },
    DURING_WAITS,
];

// The keys of one Poisson source: `[host.noise]` kind poisson, and its `extra` table.
const RATE: Param = Param {
    key: "rate_per_s",
    ty: NON_NEGATIVE,
    default: DefaultValue::Required,
    doc: "detours per second of undisturbed run time (Poisson arrivals)",
};
const LENGTH: Param = Param {
    key: "length",
    ty: Type::Choice(&["constant", "exponential", "lognormal"]),
    default: DefaultValue::Str("constant"),
    doc: "family of detour lengths",
};
const LENGTH_NS: Param = Param {
    key: "length_ns",
    ty: NON_NEGATIVE,
    default: DefaultValue::Required,
    doc: "mean detour length, ns",
};
const LENGTH_SIGMA: Param = Param {
    key: "length_sigma",
    ty: Type::Float {
        min: 0.0,
        max: 10.0,
    },
    default: DefaultValue::Float(1.0),
    doc: "length = lognormal: standard deviation of ln(length)",
};

const EXTRA: Param = Param {
    key: "extra",
    ty: Type::Table(&[RATE, LENGTH, LENGTH_NS, LENGTH_SIGMA]),
    default: DefaultValue::Absent,
    doc: "a second, independent Poisson source of detours with its own rate_per_s, length, length_ns and length_sigma (e.g. other processes sharing the cores)",
};

const POISSON: &[Param] = &[RATE, LENGTH, LENGTH_NS, LENGTH_SIGMA, EXTRA, DURING_WAITS];

/// The `noise` key of the `[host]` table.
pub const TABLE: Param = Param {
    key: "noise",
    ty: Type::Variant(&[("none", &[]), ("empirical", EMPIRICAL), ("poisson", POISSON)]),
    default: DefaultValue::Absent,
    doc: "host noise, detours per rank: none; empirical (a fixed-work-quantum profile: work_ns and every detour's length); poisson (a fitted family)",
};

impl HostNoise {
    /// The noise of a validated `[host]` table; None when off (absent, kind none, or no
    /// detour of any length).
    pub fn of(host: &Config) -> Option<Self> {
        if !host.has(TABLE.key) {
            return None;
        }
        let n = host.table(TABLE.key);
        let (rate_per_ns, lengths) = match n.str("kind") {
            "empirical" => {
                let detours = n.f64s("detours_ns");
                let rate = detours.len() as f64 / n.f64("work_ns");
                (rate, Lengths::Empirical(detours))
            }
            "poisson" => {
                let (rate, first) = source(&n);
                if !n.has(EXTRA.key) {
                    (rate, first)
                } else {
                    let (extra, second) = source(&n.table(EXTRA.key));
                    let mixture = Mixture {
                        first_share: rate / (rate + extra),
                        first,
                        second,
                    };
                    (rate + extra, Lengths::Mixture(Box::new(mixture)))
                }
            }
            _ => return None,
        };
        let noise = Self {
            rate_per_ns,
            lengths,
            during_waits: n.bool("during_waits"),
        };
        (noise.rate_per_ns > 0.0 && noise.lengths.mean() > 0.0).then_some(noise)
    }

    /// The detour length distribution's mean, ns.
    pub fn mean_length(&self) -> f64 {
        self.lengths.mean()
    }
}

/// One Poisson source's rate (per ns) and lengths.
fn source(n: &Config) -> (f64, Lengths) {
    let mean = n.f64(LENGTH_NS.key);
    let lengths = match n.str(LENGTH.key) {
        "exponential" => Lengths::Exponential { mean },
        "lognormal" => {
            let sigma = n.f64(LENGTH_SIGMA.key);
            Lengths::Lognormal {
                mu: mean.ln() - sigma * sigma / 2.0,
                sigma,
            }
        }
        _ => Lengths::Constant(mean),
    };
    (n.f64(RATE.key) / 1e9, lengths)
}

impl Lengths {
    fn mean(&self) -> f64 {
        match self {
            Self::Constant(d) => *d,
            Self::Exponential { mean } => *mean,
            Self::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Self::Empirical(v) => v.iter().sum::<f64>() / v.len() as f64,
            Self::Mixture(m) => m.mean(),
        }
    }

    fn draw(&self, rng: &mut SplitMix64) -> f64 {
        match self {
            Self::Constant(d) => *d,
            Self::Exponential { mean } => mean * exponential(rng),
            Self::Lognormal { mu, sigma } => (mu + sigma * normal(rng)).exp(),
            Self::Empirical(v) => v[rng.below(v.len() as u64) as usize],
            Self::Mixture(m) => m.draw(rng),
        }
    }
}

impl Mixture {
    fn mean(&self) -> f64 {
        self.first_share * self.first.mean() + (1.0 - self.first_share) * self.second.mean()
    }

    fn draw(&self, rng: &mut SplitMix64) -> f64 {
        if uniform(rng) < self.first_share {
            self.first.draw(rng)
        } else {
            self.second.draw(rng)
        }
    }
}

/// Uniform in [0, 1) from the top 53 bits.
fn uniform(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Exponential with mean 1 (inversion).
fn exponential(rng: &mut SplitMix64) -> f64 {
    -(1.0 - uniform(rng)).ln()
}

/// Standard normal (Box–Muller; one of the pair is used, so a draw is one call).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = 1.0 - uniform(rng); // (0, 1]
    let v = uniform(rng);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// One rank's detours in wall-clock time, drawn lazily as the rank's time moves on. Asked
/// at non-decreasing start times (a rank's own instants), it keeps only the detours that
/// end after the latest one asked: the first in `next` (most work ends before it starts,
/// which one comparison tells), the others, drawn when some work reached past `next`, in
/// `later`.
#[derive(Debug, Clone)]
pub struct Timeline {
    rng: SplitMix64,
    /// The first detour not over at the latest time asked: (start, end).
    next: (Time, Time),
    /// Detours drawn after `next`, in order, disjoint.
    later: VecDeque<(Time, Time)>,
    /// End of the last detour drawn: the process runs from there until the next one.
    drawn_to: Time,
}

impl Timeline {
    /// Rank `rank`'s timeline for a replay seeded `seed` (streams of different ranks are
    /// SplitMix64 sequences from well-mixed, distinct seeds). At time 0 the process runs.
    pub fn new(noise: &HostNoise, seed: u64, rank: u32) -> Self {
        const STREAM: u64 = 0x6e6f_6973_6521; // "noise!": apart from other uses of the seed
        let mut base = SplitMix64::new(seed ^ STREAM);
        let mixed = SplitMix64::new(base.next_u64() ^ u64::from(rank)).next_u64();
        let mut timeline = Self {
            rng: SplitMix64::new(mixed),
            next: (0.0, 0.0),
            later: VecDeque::new(),
            drawn_to: 0.0,
        };
        timeline.next = timeline.draw(noise);
        timeline
    }

    /// The detour after the last one drawn.
    fn draw(&mut self, noise: &HostNoise) -> (Time, Time) {
        let start = self.drawn_to + exponential(&mut self.rng) / noise.rate_per_ns;
        let end = start + noise.lengths.draw(&mut self.rng);
        self.drawn_to = end;
        (start, end)
    }

    /// When the process runs again at or after `t`: the end of a detour in progress at
    /// `t`, else `t`.
    #[inline]
    pub fn running_at(&mut self, noise: &HostNoise, t: Time) -> Time {
        while self.next.1 <= t {
            self.next = match self.later.pop_front() {
                Some(d) => d,
                None => self.draw(noise),
            };
        }
        if self.next.0 <= t {
            self.next.1
        } else {
            t
        }
    }

    /// The start of the first detour that ends after `t` (drawn ahead if need be; nothing
    /// is dropped, so later questions get the answers they would have got).
    pub fn next_start_after(&mut self, noise: &HostNoise, t: Time) -> Time {
        if self.next.1 > t {
            return self.next.0;
        }
        if let Some(&(start, _)) = self.later.iter().find(|d| d.1 > t) {
            return start;
        }
        loop {
            let d = self.draw(noise);
            self.later.push_back(d);
            if d.1 > t {
                return d.0;
            }
        }
    }

    /// When `work` ns of CPU work begun at `t` end: the work runs only outside detours.
    #[inline]
    pub fn work(&mut self, noise: &HostNoise, t: Time, work: Time) -> Time {
        let at = self.running_at(noise, t);
        if self.next.0 >= at + work {
            return at + work; // the usual case: the next detour comes after the work
        }
        self.work_across(noise, at, work)
    }

    /// `work` from `at` (the process runs then), across detours.
    #[inline(never)]
    fn work_across(&mut self, noise: &HostNoise, mut at: Time, mut left: Time) -> Time {
        for i in 0.. {
            let (start, end) = if i == 0 {
                self.next
            } else {
                if self.later.len() < i {
                    let d = self.draw(noise);
                    self.later.push_back(d);
                }
                self.later[i - 1]
            };
            if end <= at {
                continue; // the one in progress at the start, which `at` already waited for
            }
            if start >= at + left {
                break;
            }
            left -= start - at;
            at = end;
        }
        at + left
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::schema::{self, Value};

    /// A `[host.noise]` table of kind `kind`.
    fn table(kind: &str, keys: &[(&str, Value)]) -> Value {
        let mut pairs = vec![("kind", Value::from(kind))];
        pairs.extend(keys.iter().cloned());
        Value::table(pairs)
    }

    fn noise_of(n: Value) -> Result<Option<HostNoise>, schema::ConfigError> {
        let host = std::collections::BTreeMap::from([("noise".to_string(), n)]);
        let config = schema::validate(&host, &[&[TABLE]], "host.")?;
        Ok(HostNoise::of(&config))
    }

    fn poisson(rate_per_s: f64, length: &str, length_ns: f64) -> HostNoise {
        let keys = [
            ("rate_per_s", Value::from(rate_per_s)),
            ("length", Value::from(length)),
            ("length_ns", Value::from(length_ns)),
        ];
        noise_of(table("poisson", &keys)).unwrap().unwrap()
    }

    #[test]
    fn profiles_give_the_rate_per_ns_of_run_time_and_none_is_off() {
        let keys = [
            ("work_ns", Value::from(1e9)),
            ("detours_ns", Value::from(vec![10.0, 30.0])),
        ];
        let e = noise_of(table("empirical", &keys)).unwrap().unwrap();
        assert_eq!((e.rate_per_ns, e.mean_length()), (2e-9, 20.0));
        assert!(e.during_waits);
        let p = poisson(1000.0, "lognormal", 5000.0);
        assert!((p.rate_per_ns - 1e-6).abs() < 1e-18);
        assert!((p.mean_length() - 5000.0).abs() < 1e-6);
        assert_eq!(noise_of(table("none", &[])).unwrap(), None);
        let zero = [("rate_per_s", Value::from(0.0)), ("length_ns", 1.0.into())];
        assert_eq!(noise_of(table("poisson", &zero)).unwrap(), None);
    }

    #[test]
    fn an_extra_source_adds_its_rate_and_mixes_lengths_in_proportion() {
        let extra = Value::table([
            ("rate_per_s", Value::from(3000.0)),
            ("length_ns", Value::from(10.0)),
        ]);
        let keys = [
            ("rate_per_s", Value::from(1000.0)),
            ("length_ns", Value::from(50.0)),
            ("extra", extra),
        ];
        let n = noise_of(table("poisson", &keys)).unwrap().unwrap();
        assert!((n.rate_per_ns - 4e-6).abs() < 1e-18);
        assert!((n.mean_length() - (0.25 * 50.0 + 0.75 * 10.0)).abs() < 1e-9);
        let mut rng = SplitMix64::new(7);
        let draws = 100_000;
        let long = (0..draws)
            .filter(|_| n.lengths.draw(&mut rng) == 50.0)
            .count();
        // a quarter of the detours come from the first source (binomial sd 0.14 %)
        assert!((long as f64 / draws as f64 - 0.25).abs() < 0.006, "{long}");
        let bad = Value::table([("rate_per_s", Value::from(-1.0))]);
        let keys = [
            ("rate_per_s", Value::from(1.0)),
            ("length_ns", Value::from(1.0)),
            ("extra", bad),
        ];
        let e = noise_of(table("poisson", &keys)).unwrap_err();
        assert_eq!(e.key, "host.noise.extra.rate_per_s");
    }

    #[test]
    fn bad_profiles_name_the_key() {
        let e = noise_of(table("poisson", &[("length_ns", 1.0.into())])).unwrap_err();
        assert_eq!(e.key, "host.noise.rate_per_s");
        let keys = [
            ("work_ns", Value::from(1e9)),
            ("detours_ns", Value::from(vec![-1.0])),
        ];
        let e = noise_of(table("empirical", &keys)).unwrap_err();
        assert_eq!(e.key, "host.noise.detours_ns");
        let e = noise_of(table("gaussian", &[])).unwrap_err();
        assert_eq!(e.key, "host.noise.kind");
        assert!(e.message.contains("none, empirical, poisson"), "{e}");
    }

    #[test]
    fn work_runs_only_outside_detours() {
        let n = poisson(1e6, "constant", 100.0); // one detour per µs of run time
        let mut t = Timeline::new(&n, 7, 0);
        let mut at = 0.0;
        let mut stretched = 0;
        for _ in 0..1000 {
            let runs_from = t.running_at(&n, at); // after a detour in progress at `at`
            let end = t.work(&n, at, 250.0);
            assert_eq!(
                t.running_at(&n, end),
                end,
                "work ends while the process runs"
            );
            // Constant lengths: after the one in progress, whole detours.
            let detours = (end - runs_from - 250.0) / 100.0;
            assert!((detours - detours.round()).abs() < 1e-6, "{detours}");
            stretched += u32::from(detours > 0.5);
            at = end + 50.0;
        }
        assert!(stretched > 100, "{stretched}"); // P = 1 - exp(-0.25) per interval

        // The same start asked again gives the same end (the detours ahead are kept).
        let mut u = Timeline::new(&n, 7, 0);
        assert_eq!(u.work(&n, 10.0, 5000.0), u.work(&n, 10.0, 5000.0));
    }

    /// In W ns of work, Poisson(λW) detours: mean stretch 1 + λ·E[length] and P(none) =
    /// exp(-λW). Over n = 20 000 intervals (independent: the process runs at each start)
    /// the standard error of the mean stretch is sqrt(λW)·d/W/sqrt(n) ≈ 0.00075 here, of
    /// P(none) sqrt(p(1-p)/n) ≈ 0.0035; the tolerances are 4 standard errors.
    #[test]
    fn stretch_and_detour_free_share_match_poisson() {
        let (w, d) = (2000.0, 300.0);
        let n = poisson(250_000.0, "constant", d); // λW = 0.5
        let lambda_w = n.rate_per_ns * w;
        let mut tl = Timeline::new(&n, 1, 3);
        let (mut sum, mut none, runs) = (0.0, 0u32, 20_000);
        let mut at = 0.0;
        for _ in 0..runs {
            let end = tl.work(&n, at, w);
            sum += (end - at) / w;
            none += u32::from(end - at == w);
            at = end;
        }
        let mean = sum / f64::from(runs);
        let expect = 1.0 + lambda_w * d / w;
        assert!((mean - expect).abs() < 4.0 * 0.00075, "{mean} vs {expect}");
        let p0 = f64::from(none) / f64::from(runs);
        assert!(((-lambda_w).exp() - p0).abs() < 4.0 * 0.0035, "{p0}");
    }

    #[test]
    fn ranks_and_seeds_draw_different_detours() {
        let n = poisson(1e5, "exponential", 1000.0);
        let first = |seed, rank| Timeline::new(&n, seed, rank).next;
        assert_eq!(first(1, 0), first(1, 0));
        assert_ne!(first(1, 0), first(1, 1));
        assert_ne!(first(1, 0), first(2, 0));
    }
}
