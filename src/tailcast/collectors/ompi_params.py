"""Open MPI's MCA parameters as `ompi_info --parsable` prints them, for the frameworks that
decide a message's protocol (btl, pml).

A parsable line is `mca:FRAMEWORK:COMPONENT:param:NAME:ATTRIBUTE:REST`, REST holding
colons of its own (`source:file (/etc/openmpi/openmpi-mca-params.conf:68)`,
`enumerator:value:0:false`); lines that are not `param` lines (`version`) are skipped.
`ompi_info` reads `OMPI_MCA_*` variables and the parameter files as a launched rank does,
so given the run's environment it prints the values that rank will use (source
`environment`), but it takes no `--mca` options of its own: the launcher's are passed as
`OMPI_MCA_` variables (`mca_env`). One framework per call: Open MPI 4.1.4 refuses
`--param btl,pml` ("The specified framework could not be found") and keeps only the
first of two `--param` options.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tailcast.collectors.proc import RetryPolicy, run_tool
from tailcast.errors import ExternalToolError

FRAMEWORKS = ("btl", "pml")
_MCA_OPTIONS = ("--mca", "-mca", "--gmca", "-gmca")


@dataclass(frozen=True)
class McaParam:
    framework: str
    component: str  # "base" for the framework's own parameters (e.g. `btl`)
    name: str
    value: str
    source: str  # default | environment | file (PATH:LINE) | command line | ...
    type: str  # size_t, int, string, bool, ...


@dataclass
class OmpiInfo:
    """What `ompi_info --parsable` said about some frameworks."""

    version: str = ""  # the components' version: Open MPI's own ("4.1.4")
    components: dict[str, list[str]] = field(default_factory=dict)  # framework -> names
    params: dict[str, McaParam] = field(default_factory=dict)  # by name

    def update(self, other: OmpiInfo) -> None:
        self.version = self.version or other.version
        self.components.update(other.components)
        self.params.update(other.params)


def parse_ompi_info(text: str) -> OmpiInfo:
    """The components and parameters of a `ompi_info --param FRAMEWORK all --level 9
    --parsable` output."""
    info = OmpiInfo()
    fields: dict[tuple[str, str, str], dict[str, str]] = {}
    for line in text.splitlines():
        parts = line.split(":", 6)
        if len(parts) < 5 or parts[0] != "mca":
            continue
        framework, component = parts[1], parts[2]
        if component != "base":
            known = info.components.setdefault(framework, [])
            if component not in known:
                known.append(component)
        if parts[3] == "version" and parts[4].startswith('"component'):
            info.version = info.version or line.rsplit(":", 1)[1].strip('"')
        if len(parts) == 7 and parts[3] == "param" and parts[5] in ("value", "source", "type"):
            fields.setdefault((framework, component, parts[4]), {})[parts[5]] = parts[6]
    for (framework, component, name), f in fields.items():
        if "value" in f:
            info.params[name] = McaParam(
                framework, component, name, f["value"], f.get("source", ""), f.get("type", "")
            )
    return info


def mca_env(launcher_args: Sequence[str]) -> dict[str, str]:
    """`--mca KEY VALUE` options of a launcher's arguments as `OMPI_MCA_KEY` variables."""
    env = {}
    args = list(launcher_args)
    for i, arg in enumerate(args[:-2]):
        if arg in _MCA_OPTIONS:
            env[f"OMPI_MCA_{args[i + 1]}"] = args[i + 2]
    return env


def read_ompi_params(
    env: Mapping[str, str] | None = None,
    policy: RetryPolicy = RetryPolicy(attempts=1, timeout_s=60),
) -> OmpiInfo:
    """The btl and pml parameters a rank started with `env` (default: this process's
    environment) will use. ExternalToolError when ompi_info is missing or fails."""
    tool = shutil.which("ompi_info")
    if tool is None:
        raise ExternalToolError("ompi_info", "not on PATH (not Open MPI, or no module loaded)")
    full = {**os.environ, **(env or {})}
    info = OmpiInfo()
    for framework in FRAMEWORKS:
        argv = [tool, "--param", framework, "all", "--level", "9", "--parsable"]
        info.update(parse_ompi_info(run_tool(argv, policy, env=full).stdout))
    return info
