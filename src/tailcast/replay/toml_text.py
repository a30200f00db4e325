"""TOML text of a parsed table (the inverse of `tomllib.loads` for what fabric files hold:
strings, integers, floats, booleans, arrays of those, tables and arrays of tables), so a
fabric changed in memory — a sweep point's overrides — is stored as the TOML it ran with."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dumps(table: dict[str, Any]) -> str:
    lines: list[str] = []
    _table(table, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(table: dict[str, Any], path: list[str], lines: list[str]) -> None:
    nested = []
    for key, value in table.items():
        if isinstance(value, dict) or _is_table_array(value):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {value_text(value)}")
    for key, value in nested:
        where = [*path, _key(key)]
        if isinstance(value, dict):
            lines.append(f"\n[{'.'.join(where)}]")
            _table(value, where, lines)
        else:
            for item in value:
                lines.append(f"\n[[{'.'.join(where)}]]")
                _table(item, where, lines)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def value_text(value: Any) -> str:
    """One value as TOML writes it inline (a table as an inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):  # a table inside an array of values: an inline table
        return "{" + ", ".join(f"{_key(k)} = {value_text(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__} {value!r}")
