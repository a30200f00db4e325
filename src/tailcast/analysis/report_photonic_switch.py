"""Report sections for the photonic switch fabrics, drawn from whatever replays the store
holds on them:

- `benes_psf` (seed 000): communication time and switching energy per bit of every
  arbitration policy, normalised to the best policy of each workload, per (ports,
  switching, routing) — Figs. 5/6 (routing), 8/9 (radix), 10/11 (switching); Table I's
  peak figures; the per-port timeline of one replay with recorded messages (Fig. 7).
- `banyan_circuit` (seed 003): optical message delay, control signal delay, blocking rate
  and throughput against normalised offered load per protocol and size (Figs. 14–16,
  18–20) for `trace synth poisson` replays; Eq. 9 next to the values §4.3 quotes.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from statistics import mean
from typing import Any

from tailcast.analysis import plots_photonic
from tailcast.analysis.labels import trace_name
from tailcast.analysis.report_blocks import Section, SectionBuilder
from tailcast.replay.fabric import parse_fabric

MAX_GROUPS = 6
PSF_STATS = (
    "mzi_energy_pj_per_bit",
    "energy_pj_per_bit",
    "peak_energy_pj_per_bit",
    "peak_power_w",
    "max_insertion_loss_db",
    "blocking_ratio_max",
)
GEMINI_STATS = (
    "optical_delay_mean_ns",
    "control_delay_mean_ns",
    "control_delay_min_ns",
    "blocking_rate_per_s",
    "optical_utilisation",
    "throughput_normalised",
)
# Seed 000 Table I (MZI PSF rows): ports, Gb/s per port, W, pJ/bit.
TABLE_I = ((16, 512, 21.2, 2.6), (32, 512, 23.0, 1.4), (64, 512, 27.3, 0.8), (64, 400, 27.3, 1.1))
# Seed 003 §4.3: "99.20%, 98.91%, 98.63%, and 98.34%" for N = 4, 8, 16, 32.
QUOTED_EQ9 = {4: 99.20, 8: 98.91, 16: 98.63, 32: 98.34}


def photonic_sections(b: SectionBuilder) -> list[Section]:
    return [_psf_section(b), _gemini_section(b)]


def _replays_on(
    b: SectionBuilder, model: str, stats: tuple[str, ...]
) -> tuple[list[dict[str, Any]], str]:
    """Replays on fabrics of `model`, one dict each with the named fabric counters."""
    names = ", ".join(f"'{s}'" for s in stats)
    query = (
        "SELECT r.*, s.name, s.value FROM replays r JOIN fabric_stats s USING (replay_id) "
        f"WHERE r.fabric_toml LIKE '%\"{model}\"%' AND s.name IN ({names})"
    )
    by_id: dict[str, dict[str, Any]] = {}
    for row in b.cat.rows(query):
        rec = by_id.setdefault(
            row["replay_id"], {k: v for k, v in row.items() if k not in ("name", "value")}
        )
        rec[row["name"]] = row["value"]
    return list(by_id.values()), query


class _Settings:
    """A stored fabric's parameters, defaults included (parsed once per distinct TOML; a
    sweep point stores the TOML it ran with, overrides applied)."""

    def __init__(self) -> None:
        self.cache: dict[str, dict[str, Any]] = {}

    def __call__(self, toml_text: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if toml_text not in self.cache:
            fabric = parse_fabric(toml_text, "<stored fabric>")
            self.cache[toml_text] = {k: fabric.value(k) for k in keys}
        return self.cache[toml_text]


def _psf_section(b: SectionBuilder) -> Section:
    sec = Section("photonic_psf", "Photonic ToR switch: MZI Beneš fabric (seed 000)")
    recs, query = _replays_on(b, "benes_psf", PSF_STATS)
    if not recs:
        sec.notes.append(
            "No replays on benes_psf fabrics (bench/photonic_bench.py --store DIR "
            "runs seed 000's sweep into a store)."
        )
        return sec
    prov = b.prov(query)
    settings = _Settings()
    keys = ("ports", "switching", "routing", "arbitration")
    cells: dict[tuple[Any, ...], dict[str, dict[str, list[tuple[float, float]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for r in recs:
        s = settings(r["fabric_toml"], keys)
        workload = str(r.get("application") or r["trace_id"]).removeprefix("seed000-")
        point = (s["ports"], s["switching"], s["routing"])
        cells[point][workload][s["arbitration"]].append(
            (float(r["total_time_ns"]), float(r.get("mzi_energy_pj_per_bit") or math.nan))
        )
    sec.notes.append(
        "Each bar: mean over the stored seeds of a policy's communication time (the trace's "
        "simulated end) or switching energy per bit (MZI tuning energy over bits carried, "
        "§IV-C), divided by the best policy's for that workload (1 = best)."
    )
    drawn, single = 0, []
    for point, workloads in sorted(cells.items(), key=lambda kv: str(kv[0])):
        label = _point_label(*point)
        policies = sorted({p for pol in workloads.values() for p in pol})
        if len(policies) < 2:
            # Normalised to the best of one policy, every bar would be 1: nothing compared.
            single.append(f"{label} ({', '.join(p.upper() for p in policies)} only)")
            continue
        if drawn == MAX_GROUPS:
            sec.notes.append("More (ports, switching, routing) groups not drawn.")
            break
        drawn += 1
        times = {
            w: _normalised({p: mean(x[0] for x in v) for p, v in pol.items()})
            for w, pol in workloads.items()
        }
        energy = {
            w: _normalised({p: mean(x[1] for x in v) for p, v in pol.items()})
            for w, pol in workloads.items()
        }
        stem = f"psf_{point[0]}_{point[1]}_{point[2]}"
        sec.figures.append(
            b.figure(
                plots_photonic.policy_bars(
                    times,
                    b.plot_dir,
                    f"{stem}_time",
                    f"Communication time per arbitration policy, normalised to the best — {label}",
                    "time / best policy's",
                ),
                prov,
                wide=True,
            )
        )
        sec.figures.append(
            b.figure(
                plots_photonic.policy_bars(
                    energy,
                    b.plot_dir,
                    f"{stem}_energy",
                    f"Energy per bit per arbitration policy, normalised to the best — {label}",
                    "energy per bit / best policy's",
                ),
                prov,
                wide=True,
            )
        )
        rows = [
            {"workload": w, **{p.upper(): t.get(p) for p in plots_photonic.POLICY_COLOURS}}
            for w, t in times.items()
        ]
        sec.tables.append(
            b.table(f"Communication time per policy / best policy's — {label}", rows, prov)
        )
    if single:
        sec.notes.append(
            "No policy comparison for "
            + "; ".join(single)
            + ": its replays ran under one arbitration policy (replay the same traces on the "
            "fabric with `arbitration` set to others, or run bench/photonic_bench.py --store DIR)."
        )
    peaks = defaultdict(list)
    for r in recs:
        if r.get("peak_energy_pj_per_bit") is not None:
            peaks[settings(r["fabric_toml"], keys)["ports"]].append(r)
    table_i = [
        {
            "ports": ports,
            "model_power_w": mean(float(x["peak_power_w"]) for x in rs),
            "model_pj_per_bit": mean(float(x["peak_energy_pj_per_bit"]) for x in rs),
            "table_i_power_w": next((t[2] for t in TABLE_I if t[0] == ports and t[1] == 512), None),
            "table_i_pj_per_bit": next(
                (t[3] for t in TABLE_I if t[0] == ports and t[1] == 512), None
            ),
            "measured_mzi_pj_per_bit": mean(float(x["mzi_energy_pj_per_bit"]) for x in rs),
            "measured_total_pj_per_bit": mean(float(x["energy_pj_per_bit"]) for x in rs),
        }
        for ports, rs in sorted(peaks.items())
    ]
    sec.tables.append(
        b.table(
            "Peak power and energy per bit (Table I's method) next to what the "
            "replays spent (MZI tuning alone, and with the 20 W controller)",
            table_i,
            prov,
        )
    )
    _timeline(b, sec, recs)
    return sec


SWITCHING = {"cs": "circuit switching (CS)", "tdm": "slotted switching (TDM)"}
ROUTING = {"rnd": "random", "mb": "fewest-bar-cells", "mx": "fewest-crossings"}


def _point_label(ports: Any, switching: Any, routing: Any) -> str:
    """Spelled out: routing's "rnd" (a random free path) is not the RND arbitration policy."""
    sw, rt = str(switching), str(routing)
    return f"{ports} ports, {SWITCHING.get(sw, sw)}, {ROUTING.get(rt, rt)} path routing ({rt})"


def _normalised(row: dict[str, float]) -> dict[str, float]:
    finite = [v for v in row.values() if math.isfinite(v) and v > 0]
    best = min(finite, default=math.nan)
    return {p: v / best for p, v in row.items()}


def _timeline(b: SectionBuilder, sec: Section, recs: list[dict[str, Any]]) -> None:
    """Fig. 7: the latest benes_psf replay whose messages were recorded."""
    ids = ", ".join(f"'{r['replay_id']}'" for r in recs)
    query = (
        "SELECT m.replay_id, m.src_rank, m.bytes, m.posted_ns, m.delivered_ns, m.setup_ns, "
        f"m.blocked FROM replay_messages m WHERE m.replay_id = (SELECT replay_id FROM replays "
        f"WHERE replay_id IN ({ids}) AND replay_id IN (SELECT replay_id FROM replay_messages) "
        "ORDER BY created_at DESC LIMIT 1) AND m.job = 0"
    )
    rows = b.cat.rows(query)
    if not rows:
        sec.notes.append(
            "No benes_psf replay with recorded messages (replay run --messages) for "
            "a Fig. 7 timeline."
        )
        return
    rid = rows[0]["replay_id"]
    replay = next(r for r in recs if r["replay_id"] == rid)
    fabric = parse_fabric(replay["fabric_toml"], "<stored fabric>")
    rate = float(fabric.value("wavelengths")) * float(fabric.value("wavelength_gbps")) / 8.0
    intervals: dict[int, list[tuple[float, float, bool]]] = defaultdict(list)
    for m in rows:
        end = m["delivered_ns"] / 1e3
        start = end - m["bytes"] / rate / 1e3
        intervals[int(m["src_rank"])].append((start, end, False))
        if m["blocked"]:
            intervals[int(m["src_rank"])].append(
                (m["posted_ns"] / 1e3, start - m["setup_ns"] / 1e3, True)
            )
    who = f"{trace_name(replay)} on {replay['fabric']}"
    title = f"Per-rank timeline of {who} (grey: transmitting, red: blocked)"
    prov = b.prov(query)
    sec.figures.append(
        b.figure(
            plots_photonic.port_timeline(intervals, b.plot_dir, "psf_timeline", title),
            prov,
            wide=True,
        )
    )
    sec.notes.append(
        "Timeline: a message transmits for its bytes at the port rate before it "
        "is delivered and, when it was refused a path, is blocked from its posting "
        "until then (under TDM its slots interleave within that span)."
    )


def _gemini_section(b: SectionBuilder) -> Section:
    sec = Section(
        "photonic_gemini",
        "Gemini circuit switch: optical Banyan with electrical control (seed 003)",
    )
    sec.tables.append(
        b.table(
            "Eq. 9 (Γ = 16384, Θ = 12) next to the values §4.3 quotes for α_sig = 1.25",
            [
                {
                    "ports": n,
                    "eq9_alpha_1.25_pct": _eq9(n, 1.25),
                    "eq9_alpha_1_pct": _eq9(n, 1.0),
                    "quoted_pct": q,
                }
                for n, q in QUOTED_EQ9.items()
            ],
            b.prov(None, []),
        )
    )
    sec.notes.append(
        "§4.3 states α_sig = 1.25 but its quoted efficiencies are Eq. 9 at "
        "α_sig = 1 (as in Fig. 13); the model follows the equations."
    )
    recs, query = _replays_on(b, "banyan_circuit", GEMINI_STATS)
    poisson = [r for r in recs if r.get("application") == "seed003-poisson" and r.get("trace_meta")]
    if not poisson:
        sec.notes.append("No replays of `trace synth poisson` traces on banyan_circuit fabrics.")
        return sec
    prov = b.prov(query)
    settings = _Settings()
    points: dict[tuple[Any, ...], dict[float, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in poisson:
        meta = json.loads(r["trace_meta"])
        s = settings(r["fabric_toml"], ("ports", "protocol"))
        points[(s["protocol"], s["ports"], meta.get("lengths", "?"))][float(meta["load"])].append(r)
    figures = (
        ("optical_delay_mean_ns", "optical message delay (µs)", 1e-3, True),
        ("control_delay_mean_ns", "control signal delay (µs)", 1e-3, False),
        ("blocking_rate_per_s", "blocked setups per second", 1.0, False),
        ("throughput_normalised", "throughput / Eq. 8 maximum", 1.0, False),
    )
    for stat, ylabel, scale, log_y in figures:
        curves = {}
        for (protocol, ports, lengths), by_load in sorted(
            points.items(), key=lambda kv: str(kv[0])
        ):
            loads = sorted(by_load)
            ys = [scale * mean(float(r[stat]) for r in by_load[x]) for x in loads]
            curves[f"{protocol} N={ports} {lengths}"] = (loads, ys)
        title = f"{ylabel[0].upper()}{ylabel[1:]} against offered load"
        sec.figures.append(
            b.figure(
                plots_photonic.load_curves(
                    curves, b.plot_dir, f"gemini_{stat}", title, ylabel, log_y
                ),
                prov,
            )
        )
    rows = [
        {
            "protocol": k[0],
            "ports": k[1],
            "lengths": k[2],
            "load": load,
            "replays": len(rs),
            **{s: mean(float(r[s]) for r in rs) for s in GEMINI_STATS},
        }
        for k, by_load in sorted(points.items(), key=lambda kv: str(kv[0]))
        for load, rs in sorted(by_load.items())
    ]
    sec.tables.append(b.table("Seed 003 metrics per protocol, size and offered load", rows, prov))
    return sec


def _eq9(ports: int, alpha: float, gamma: float = 16384.0, theta: float = 12.0) -> float:
    return 100 * gamma / (gamma + theta * (2 * (1 + alpha) * math.log2(ports) + 3))
