//! The MZI Beneš photonic top-of-rack switch of seed 000 (Navaridas et al., TPDS 2024):
//! an N-port Beneš PSF of 2×2 MZIs (N = 16, 32, 64; 3:1 oversubscribed: the last N/4
//! ports are uplinks), 32 λ × 16 Gb/s per port, under a central controller that
//! arbitrates the requesting ports in rounds (FIFO, LRU, LFU, RND, RR, ARR, MRR), routes
//! each over one of the N/2 pre-computed paths of its pair (rnd, mb, mx) and switches
//! whole flows (CS) or 100 KB slots (TDM). Reports switching energy (Table II tuning
//! powers, controller power), insertion loss (Table II losses) and per-port blocking.
//!
//! MPI's rendezvous handshake has no counterpart in the seed's flow-level model (flows
//! start when both tasks are ready): by default messages move once both sides are posted
//! (`rendezvous = "none"`); `"fabric"` sends RTS and CTS as small circuits of their own,
//! as a bufferless ToR would have to.

use crate::fabric::photonic_switches::arbitration::{Arbiter, Policy};
use crate::fabric::photonic_switches::psf_cells::{Cells, PowerSpread, Routing};
use crate::fabric::photonic_switches::psf_paths::{Layout, Losses, PathTable};
use crate::fabric::photonic_switches::psf_switch::{Finished, PsfSwitch, SwitchTiming, Switching};
use crate::fabric::registry::{Built, Model};
use crate::fabric::schema::{Config, ConfigError, DefaultValue, Param, Type};
use crate::fabric::{Delivery, Fabric, Submitted, Time, Transfer, TransferInfo};
use crate::prng::SplitMix64;

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

const fn float(key: &'static str, default: f64, doc: &'static str) -> Param {
    Param {
        key,
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(default),
        doc,
    }
}

const fn range(key: &'static str, doc: &'static str) -> Param {
    Param {
        key,
        ty: Type::FloatList {
            min: 0.0,
            max: f64::INFINITY,
            len: (2, 2),
        },
        default: DefaultValue::Absent,
        doc,
    }
}

pub const MODEL: Model = Model {
    name: "benes_psf",
    doc: "MZI Beneš photonic ToR switch with arbitration, routing, CS/TDM switching, energy and insertion loss (seed 000: Navaridas et al. 2024)",
    params: &[
        &[
            Param {
                key: "ports",
                ty: Type::Int { min: 2, max: 64 },
                default: DefaultValue::Int(16),
                doc: "switch radix N (a power of two for the Beneš layout; seed 000: 16, 32, 64)",
            },
            Param {
                key: "layout",
                ty: Type::Choice(&["benes", "crossbar"]),
                default: DefaultValue::Str("benes"),
                doc: "benes: N/2 paths per pair (§III-A); crossbar: an MZI crossbar, one path per pair",
            },
            float("oversubscription", 3.0, "server ports per uplink: the last N/(1+r) ports are uplinks (§IV-A: 12 + 4 of 16)"),
            Param {
                key: "arbitration",
                ty: Type::Choice(Policy::NAMES),
                default: DefaultValue::Str("fifo"),
                doc: "order of service in a round (§III-B): fifo, lru, lfu, rnd, rr, arr, mrr",
            },
            Param {
                key: "routing",
                ty: Type::Choice(Routing::NAMES),
                default: DefaultValue::Str("rnd"),
                doc: "path among the free ones (§IV-B): rnd random, mb fewest bar cells, mx fewest crossings",
            },
            Param {
                key: "switching",
                ty: Type::Choice(&["cs", "tdm"]),
                default: DefaultValue::Str("cs"),
                doc: "cs: a flow holds its path to its end; tdm: slots of slot_bytes (§IV-A)",
            },
            Param {
                key: "slot_bytes",
                ty: Type::Int { min: 1, max: 1 << 40 },
                default: DefaultValue::Int(100_000),
                doc: "TDM slot (§IV-A: 100 KB, about 1.5 µs at 512 Gb/s)",
            },
            Param {
                key: "wavelengths",
                ty: Type::Int { min: 1, max: 1024 },
                default: DefaultValue::Int(32),
                doc: "wavelengths per port, all modulated at once (§III-A: 32)",
            },
            float("wavelength_gbps", 16.0, "data rate per wavelength (§III-A: 16 Gb/s OOK)"),
            float("reconfiguration_ns", 3.0, "EO tuning before a granted path carries light (§III-A: 'a few ns')"),
            float("bar_loss_db", 1.4, "insertion loss of a cell in the bar state (Table II)"),
            float("cross_loss_db", 0.4, "insertion loss of a cell in the cross state (Table II)"),
            float("crossing_loss_db", 0.05, "insertion loss of a waveguide crossing (Table II)"),
            float("propagation_loss_db_per_cm", 1.18, "waveguide propagation loss (Table II)"),
            float("cell_length_um", 1000.0, "waveguide per cell crossed (assumed: the seed gives no geometry)"),
            float("thermal_tuning_mean_mw", 15.725, "TO tuning power of a cell in use, mean (Table II)"),
            float("thermal_tuning_sd_mw", 6.608, "TO tuning power, standard deviation over cells (Table II)"),
            range("thermal_tuning_range_mw", "TO tuning power range (Table II: [0, 26])"),
            float("electrical_tuning_mean_mw", 5.166, "extra EO tuning power of a cell in bar, mean (Table II)"),
            float("electrical_tuning_sd_mw", 0.428, "EO tuning power, standard deviation over cells (Table II)"),
            range("electrical_tuning_range_mw", "EO tuning power range (Table II: [3.28, 5.88])"),
            float("controller_w", 20.0, "FPGA controller power (§II-B: a pessimistic 20 W)"),
            Param {
                key: "rendezvous",
                ty: Type::Choice(&["none", "fabric"]),
                default: DefaultValue::Str("none"),
                doc: "none: data moves once both sides are posted (the seed's flows); fabric: RTS/CTS take circuits",
            },
            Param {
                key: "control_bytes",
                ty: Type::Int { min: 0, max: 1 << 20 },
                default: DefaultValue::Int(64),
                doc: "bytes an RTS or CTS carries over its circuit (rendezvous = fabric)",
            },
        ],
    ],
    build,
};

const THERMAL_RANGE: [f64; 2] = [0.0, 26.0];
const ELECTRICAL_RANGE: [f64; 2] = [3.28, 5.88];

fn spread(c: &Config, prefix: &str, default: [f64; 2]) -> PowerSpread {
    let range = if c.has(&format!("{prefix}_range_mw")) {
        c.f64s(&format!("{prefix}_range_mw"))
    } else {
        default.to_vec()
    };
    PowerSpread {
        mean_mw: c.f64(&format!("{prefix}_mean_mw")),
        sd_mw: c.f64(&format!("{prefix}_sd_mw")),
        min_mw: range[0],
        max_mw: range[1],
    }
}

fn build(c: &Config, seed: u64) -> Result<Built, ConfigError> {
    let ports = c.u32("ports");
    let layout = match c.str("layout") {
        "crossbar" => Layout::Crossbar,
        _ => Layout::Benes,
    };
    let losses = Losses {
        bar_db: c.f64("bar_loss_db"),
        cross_db: c.f64("cross_loss_db"),
        crossing_db: c.f64("crossing_loss_db"),
        propagation_db_per_cm: c.f64("propagation_loss_db_per_cm"),
        cell_length_um: c.f64("cell_length_um"),
    };
    let table = PathTable::new(layout, ports, &losses).map_err(|message| ConfigError {
        key: "ports".into(),
        message,
    })?;
    let thermal = spread(c, "thermal_tuning", THERMAL_RANGE);
    let electrical = spread(c, "electrical_tuning", ELECTRICAL_RANGE);
    for (key, s) in [("thermal_tuning", &thermal), ("electrical_tuning", &electrical)] {
        if !(s.min_mw <= s.mean_mw && s.mean_mw <= s.max_mw) {
            return Err(ConfigError {
                key: format!("{key}_mean_mw"),
                message: format!("must lie in the range [{}, {}]", s.min_mw, s.max_mw),
            });
        }
    }
    let rate_gbps = f64::from(c.u32("wavelengths")) * c.f64("wavelength_gbps");
    if rate_gbps <= 0.0 {
        return Err(ConfigError {
            key: "wavelength_gbps".into(),
            message: "must be > 0".into(),
        });
    }
    let switching = match c.str("switching") {
        "tdm" => Switching::Tdm {
            slot_bytes: c.i64("slot_bytes") as u64,
        },
        _ => Switching::Circuit,
    };
    let timing = SwitchTiming {
        rate: rate_gbps / 8.0,
        reconfiguration_ns: c.f64("reconfiguration_ns"),
        switching,
        routing: Routing::parse(c.str("routing")).expect("declared choice"),
    };
    let mut rng = SplitMix64::new(seed ^ 0xBE7E5);
    let cells = Cells::new(table.cells(), &thermal, &electrical, &mut rng);
    let policy = Policy::parse(c.str("arbitration")).expect("declared choice");
    let arbiter = Arbiter::new(policy, ports, SplitMix64::new(rng.next_u64()));
    let switch_rng = SplitMix64::new(rng.next_u64());
    let uplinks = (f64::from(ports) / (1.0 + c.f64("oversubscription"))).round() as u32;
    let handshake = c.str("rendezvous") == "fabric";
    Ok(Built {
        fabric: Box::new(BenesPsf {
            switch: PsfSwitch::new(table, cells, arbiter, timing, switch_rng),
            first_uplink: ports - uplinks.min(ports),
            controller_mw: c.f64("controller_w") * 1e3,
            control_bytes: c.i64("control_bytes") as u64,
            class: Vec::new(),
            finished: Vec::new(),
        }),
        handshake,
    })
}

/// Path classes: both ends on server ports, or one on an uplink.
const RACK: u8 = 0;
const UPLINK: u8 = 1;

pub struct BenesPsf {
    switch: PsfSwitch,
    first_uplink: u32,
    /// Controller power, mW.
    controller_mw: f64,
    control_bytes: u64,
    /// Path class of every transfer in flight, by id.
    class: Vec<u8>,
    finished: Vec<Finished>,
}

impl Fabric for BenesPsf {
    fn endpoints(&self) -> Option<u32> {
        Some(self.switch.ports())
    }

    fn injection_rate(&self, _endpoint: u32) -> f64 {
        self.switch.rate()
    }

    fn submit(&mut self, now: Time, t: &Transfer) -> Submitted {
        let bytes = if t.kind.is_control() {
            self.control_bytes
        } else {
            t.bytes
        };
        if t.src == t.dst {
            // Two tasks on one server: a copy at the port rate, outside the switch.
            return Submitted::At(now + bytes as f64 / self.switch.rate());
        }
        let id = t.id as usize;
        if self.class.len() <= id {
            self.class.resize(id + 1, RACK);
        }
        let uplink = t.src >= self.first_uplink || t.dst >= self.first_uplink;
        self.class[id] = if uplink { UPLINK } else { RACK };
        self.switch.request(now, t.id, t.src, t.dst, bytes);
        Submitted::Later
    }

    fn next_time(&mut self) -> Option<Time> {
        self.switch.next_time()
    }

    fn advance(&mut self, now: Time, delivered: &mut Vec<Delivery>) {
        self.finished.clear();
        self.switch.advance(now, &mut self.finished);
        delivered.extend(self.finished.iter().map(|f| Delivery {
            id: f.token,
            at: f.at,
            info: TransferInfo {
                setup_ns: f.setup_ns,
                wait_ns: f.wait_ns,
                blocked: f.blocked,
                hops: f.cells,
                path: self.class[f.token as usize],
            },
        }));
    }

    fn reports_transfers(&self) -> bool {
        true
    }

    fn path_classes(&self) -> &'static [&'static str] {
        &["rack", "uplink"]
    }

    fn stats(&self, now: Time, out: &mut Vec<(String, f64)>) {
        let s = &self.switch;
        let n = f64::from(s.ports());
        out.push(("ports".into(), n));
        out.push(("uplinks".into(), n - f64::from(self.first_uplink)));
        s.stats(now, out);
        let bits = s.delivered_bytes() * 8.0;
        let per_bit = |pj: f64| if bits > 0.0 { pj / bits } else { 0.0 };
        let mzi = s.cell_energy_pj(now);
        let controller = self.controller_mw * now;
        out.push(("mzi_energy_pj".into(), mzi));
        out.push(("mzi_energy_pj_per_bit".into(), per_bit(mzi)));
        out.push(("controller_energy_pj".into(), controller));
        out.push(("energy_pj_per_bit".into(), per_bit(mzi + controller)));
        // Table I's figure: controller and every cell tuned to bar, over the switching
        // capacity (mW per bit/ns = pJ/bit).
        let capacity_bits_per_ns = n * s.rate() * 8.0;
        let peak = (self.controller_mw + s.peak_cell_power_mw()) / capacity_bits_per_ns;
        out.push(("peak_power_w".into(), (self.controller_mw + s.peak_cell_power_mw()) / 1e3));
        out.push(("peak_energy_pj_per_bit".into(), peak));
    }
}
