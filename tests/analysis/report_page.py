"""Reading a written report the way its reader does: the page's visible text, each figure's
SVG (its text, where its legends sit, how its series look) and its tables' number formats."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

HEX_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")  # the store's replay / run ids
SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def visible_text(html: str) -> str:
    """The page as read: without the provenance blocks (their queries and Parquet file names
    recompute every number, and the store names its files by id) and the embedded images."""
    html = re.sub(r"<details>.*?</details>", "", html, flags=re.DOTALL)
    html = re.sub(r'src="data:[^"]*"', "", html)
    return re.sub(r"<[^>]+>", " ", html)


def _bbox(path: ET.Element) -> tuple[float, float, float, float]:
    numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def check_svg(svg: Path) -> list[str]:
    """Asserts that a figure has no id in its text, no legend over an axes and no two legend
    entries drawn alike; returns its text."""
    root = ET.parse(svg).getroot()
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert not [t for t in texts if HEX_ID.search(t)], (svg.name, texts)
    groups = [g for g in root.iter(f"{SVG}g") if g.get("id")]
    axes = [
        _bbox(next(g.iter(f"{SVG}path")))
        for g in groups
        if re.fullmatch(r"axes_\d+", g.get("id", ""))
    ]
    for legend in (g for g in groups if re.fullmatch(r"legend_\d+", g.get("id", ""))):
        frame, *entries = [g for g in legend if g.tag == f"{SVG}g"]
        box = _bbox(next(frame.iter(f"{SVG}path")))
        assert not [a for a in axes if _overlap(box, a)], f"{svg.name}: legend over the data"
        handles = [e for e in entries if not e.get("id", "").startswith("text_")]
        looks = [
            tuple(
                (el.get("style") or "") + (el.get(XLINK_HREF) or "")
                for el in h.iter()
                if el.tag in (f"{SVG}path", f"{SVG}use")
            )
            for h in handles
        ]
        looks = [look for look in looks if look]
        assert len(set(looks)) == len(looks), f"{svg.name}: two series drawn alike"
    return texts


def one_format_per_column(html: str) -> None:
    """Every numeric column of every table: all fixed-point with the same decimals, or all
    scientific."""
    for table in re.findall(r"<table>(.*?)</table>", html, flags=re.DOTALL):
        headers = re.findall(r"<th>(.*?)</th>", table)
        rows = [re.findall(r"<td>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", table)]
        for i, header in enumerate(headers):
            kinds = set()
            for row in (r for r in rows if r):
                cell = row[i]
                if re.fullmatch(r"-?\d\.\d+e[+-]\d+", cell):
                    kinds.add("scientific")
                elif re.fullmatch(r"-?\d+(\.\d+)?", cell):
                    kinds.add(len(cell.partition(".")[2]))
            assert len(kinds) <= 1, (header, kinds, [r[i] for r in rows if r])
