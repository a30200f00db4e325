"""The Slurm cli_filter/lua script tailcast ships (`predict install-cli-filter`): rendered
with this installation's Python, the hook client's path, the service socket and the
command that starts the service on demand."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

BUDGET_S = 0.3  # the whole hook: client start, request, answer (issue 17)
SLURM_CONF_LINE = "CliFilterPlugins=cli_filter/lua"
TEMPLATE = Path(__file__).resolve().parent / "cli_filter.lua.j2"
CLIENT = Path(__file__).resolve().parent / "hook_client.py"


def _lua_string(value: object) -> str:
    # A JSON string literal is a valid Lua string literal for the characters paths use.
    return json.dumps(str(value))


def tailcast_command() -> str:
    """The tailcast executable of this installation (beside its Python, else on PATH)."""
    beside = Path(sys.executable).with_name("tailcast")
    if beside.exists():
        return str(beside)
    return shutil.which("tailcast") or "tailcast"


def render_cli_filter(socket_path: Path, autostart: bool = True) -> str:
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    env.filters["lua_string"] = _lua_string
    return env.from_string(TEMPLATE.read_text()).render(
        python=sys.executable,
        client=CLIENT,
        socket=socket_path,
        spawn=tailcast_command() if autostart else "",
        budget_s=f"{BUDGET_S:g}",
    )
