"""The cli_filter hook's client: run by the Lua script as
    timeout -s KILL 0.3 PYTHON -I -S hook_client.py --socket PATH [--spawn TAILCAST] OPTIONS_JSON
it finds the job's declared benchmark, asks the warm forecast service and prints one line
("tailcast: …") on stdout for the hook to show. Standard library only, nothing from
tailcast: it must start in milliseconds. Whatever goes wrong, it prints nothing and exits 0;
the hook's `timeout` kills it if the service does not answer in time.

The declaration, first found wins:
1. the job's comment: --comment "tailcast: alltoall 1M" (command line or #SBATCH);
2. the environment: TAILCAST_FORECAST="alltoall 1M";
3. a directive line in the batch script: "#TAILCAST alltoall 1M".
With --spawn, a missing service is started in the background (detached, silent) for the
next submission; this one stays silent.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys

_DECL = re.compile(r"tailcast:\s*([A-Za-z0-9_]+)\s+([0-9]+\s*[KMGkmg]?i?[Bb]?)")
_DIRECTIVE = re.compile(r"^#TAILCAST\s+([A-Za-z0-9_]+)\s+(\S+)", re.MULTILINE)
_SCRIPT_HEAD_BYTES = 65536


def declaration(options: dict[str, object]) -> tuple[str, str] | None:
    comment = str(options.get("comment") or "")
    found = _DECL.search(comment)
    if found:
        return found.group(1), found.group(2).replace(" ", "")
    env = os.environ.get("TAILCAST_FORECAST", "").split()
    if len(env) == 2:
        return env[0], env[1]
    argv = options.get("argv")
    if isinstance(argv, list) and argv and os.path.isfile(str(argv[0])):
        with open(str(argv[0]), "rb") as fh:
            head = fh.read(_SCRIPT_HEAD_BYTES)
        if head.startswith(b"#!"):
            match = _DIRECTIVE.search(head.decode("utf-8", "replace"))
            if match:
                return match.group(1), match.group(2)
    return None


def request(options: dict[str, object]) -> dict[str, object] | None:
    decl = declaration(options)
    if decl is None:
        return None
    nodes = str(options.get("nodes") or "").split("-")[0]
    nodelist = options.get("nodelist")
    digits = nodes.isascii() and nodes.isdigit()  # not "²", which int() refuses
    if not digits and not nodelist:
        return None
    return {
        "benchmark": decl[0],
        "size": decl[1],
        "nodes": int(nodes) if digits else 0,
        "ntasks": options.get("ntasks"),
        "nodelist": nodelist,
    }


def spawn_service(tailcast: str, socket_path: str) -> None:
    import subprocess  # only here: importing it costs start-up time on every submission

    subprocess.Popen(
        [tailcast, "predict", "serve", "--socket", socket_path, "--idle-exit", "3600"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives the hook and never holds its pipe
        close_fds=True,
    )


def main(argv: list[str]) -> int:
    socket_path, tailcast, options_json = "", "", ""
    args = iter(argv)
    for arg in args:
        if arg == "--socket":
            socket_path = next(args, "")
        elif arg == "--spawn":
            tailcast = next(args, "")
        else:
            options_json = arg
    socket_path = os.environ.get("TAILCAST_FORECAST_SOCKET") or socket_path
    req = request(json.loads(options_json))
    if req is None or not socket_path:
        return 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(socket_path)
        except (FileNotFoundError, ConnectionRefusedError):
            if tailcast:
                spawn_service(tailcast, socket_path)
            return 0
        sock.sendall((json.dumps(req) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    line = json.loads(data).get("line")
    if isinstance(line, str) and line:
        sys.stdout.write("tailcast: " + line.replace("\n", " ") + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:  # the hook must never fail a submission nor print a traceback
        sys.exit(0)
