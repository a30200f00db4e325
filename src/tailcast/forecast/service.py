"""The warm forecast service (`tailcast predict serve`): a small process that keeps the
trained model loaded and a queue snapshot fresh, and answers forecast requests on a Unix
socket in a few milliseconds — what lets the Slurm cli_filter hook stay inside its 300 ms
budget (loading scikit-learn and the model alone takes about a second).

Protocol: one JSON object per connection, one line each way. Request:
  {"benchmark": "alltoall", "size": "1M", "nodes": 16, "ntasks": 16, "nodelist": "node[01-16]"}
Reply: {"line": "...", "forecast": {...}} or {"error": "..."}.

A background thread re-reads the queue every `refresh_s` and reloads the model when its
metadata file changes (a request never waits for either). One service per socket: a lock
file beside the socket makes a second one exit at once, so the hook may start one on demand.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailcast.errors import TailcastError, UsageError
from tailcast.forecast.live import QueueState, Request, forecast
from tailcast.forecast.models import limit_threads_for_process
from tailcast.forecast.persist import META_FILE, LoadedModel, load_model, model_dir
from tailcast.paths import results_home
from tailcast.store import ResultsDir
from tailcast.units import parse_size

MAX_REQUEST_BYTES = 65536
CACHE_SIZE = 256  # recent distinct requests, re-forecast after every queue refresh


def default_socket_path() -> Path:
    """Per user and per results directory: $XDG_RUNTIME_DIR (else /tmp)/tailcast-UID/."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / f"tailcast-{os.getuid()}"
    home = hashlib.sha256(str(results_home().resolve()).encode()).hexdigest()[:12]
    return base / f"forecast-{home}.sock"


@dataclass
class ServiceState:
    model_name: str
    results: ResultsDir
    backend: str = "auto"
    model: LoadedModel | None = None
    model_error: str | None = None
    model_stamp: float | None = None
    queue: QueueState | None = None
    queue_error: str | None = None
    last_request: float = field(default_factory=time.monotonic)
    # Answers by request for the current model and queue; a refresh recomputes the recent
    # requests so that a repeated submission is answered from memory.
    cache: dict[Request, dict[str, Any]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refresh_model(self) -> None:
        meta = model_dir(self.model_name, self.results) / META_FILE
        try:
            stamp = meta.stat().st_mtime
        except OSError as exc:
            self.model, self.model_error, self.model_stamp = None, f"no model ({exc})", None
            return
        if stamp == self.model_stamp:
            return
        try:
            self.model, self.model_error = load_model(self.model_name, self.results), None
        except TailcastError as exc:
            self.model, self.model_error = None, str(exc)
        self.model_stamp = stamp
        self._recompute()

    def refresh_queue(self) -> None:
        from tailcast.collectors.snapshot import take_snapshot

        try:
            snap = take_snapshot(self.backend)
        except TailcastError as exc:
            self.queue_error = str(exc)
            return
        own = snap.utilisation.own_job_id if snap.utilisation.own_job_excluded else None
        jobs = tuple(j for j in snap.queue.jobs if own is None or not j.matches(own))
        self.queue = QueueState(jobs, snap.utilisation.n_t, snap.queue.taken_at, "live queue")
        self.queue_error = None
        self._recompute()

    def _forecast(self, req: Request) -> dict[str, Any]:
        assert self.model is not None and self.queue is not None
        fc = forecast(self.model, req, self.queue)
        return {"line": fc.line(), "forecast": fc.as_dict()}

    def _recompute(self) -> None:
        with self.lock:
            recent = list(self.cache)[-CACHE_SIZE:]
        fresh = {}
        if self.model is not None and self.queue is not None:
            for req in recent:
                with contextlib.suppress(TailcastError):
                    fresh[req] = self._forecast(req)
        with self.lock:
            self.cache = fresh

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        self.last_request = time.monotonic()
        model, queue = self.model, self.queue
        if model is None:
            return {"error": self.model_error or "no model loaded"}
        if queue is None:
            return {"error": self.queue_error or "no queue snapshot yet"}
        try:
            req = parse_request(request)
        except (UsageError, ValueError, TypeError, KeyError) as exc:
            return {"error": f"bad request: {exc}"}
        with self.lock:
            known = self.cache.get(req)
        if known is not None:
            return known
        answer = self._forecast(req)
        with self.lock:
            self.cache[req] = answer
        return answer


def parse_request(doc: dict[str, Any]) -> Request:
    from tailcast.collectors.jobs import expand_nodes

    nodelist = expand_nodes(str(doc["nodelist"])) if doc.get("nodelist") else ()
    nodes = int(doc.get("nodes") or len(nodelist) or 0)
    ntasks = int(doc["ntasks"]) if doc.get("ntasks") else None
    return Request(
        benchmark=str(doc["benchmark"]).lower(),
        msg_size_bytes=parse_size(str(doc["size"])),
        nodes=nodes,
        ranks=ntasks,
        nodelist=tuple(nodelist),
    )


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        line = self.rfile.readline(MAX_REQUEST_BYTES)
        try:
            reply = self.server.state.answer(json.loads(line))
        except (json.JSONDecodeError, TailcastError) as exc:
            reply = {"error": str(exc)}
        except Exception as exc:  # one bad request must not end the service
            reply = {"error": f"internal: {type(exc).__name__}: {exc}"}
        self.wfile.write((json.dumps(reply) + "\n").encode())


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, state: ServiceState) -> None:
        self.state = state
        super().__init__(str(path), _Handler)


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Any:
    """Holds the service's lock file, or yields False when another service has it."""
    with open(lock_path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)  # unwinds serve_forever so the socket and pid file are removed


def serve(
    socket_path: Path,
    state: ServiceState,
    refresh_s: float = 15.0,
    idle_exit_s: float = 0.0,
    log: Any = sys.stderr,
) -> int:
    """Runs until SIGTERM/SIGINT or `idle_exit_s` without requests. Returns an exit code."""
    if len(str(socket_path).encode()) > 100:
        raise UsageError(f"socket path too long for a Unix socket: {socket_path}")
    socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _exclusive(socket_path.with_suffix(".lock")) as mine:
        if not mine:
            log.write(f"tailcast predict serve: another service holds {socket_path}\n")
            return 0
        limit_threads_for_process()
        state.refresh_model()
        state.refresh_queue()
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()  # a stale socket of a service that died
        server = _Server(socket_path, state)
        pid_file = socket_path.with_suffix(".pid")
        pid_file.write_text(f"{os.getpid()}\n")
        stop = threading.Event()

        def refresher() -> None:
            while not stop.wait(refresh_s):
                state.refresh_model()
                state.refresh_queue()
                idle = time.monotonic() - state.last_request
                if idle_exit_s > 0 and idle > idle_exit_s:
                    log.write("tailcast predict serve: idle, exiting\n")
                    server.shutdown()
                    return

        thread = threading.Thread(target=refresher, daemon=True)
        thread.start()
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        log.write(
            f"tailcast predict serve: {socket_path} (model: "
            f"{'loaded' if state.model else state.model_error}; queue: "
            f"{'ok' if state.queue else state.queue_error})\n"
        )
        log.flush()
        try:
            server.serve_forever(poll_interval=0.5)
        finally:
            stop.set()
            server.server_close()
            for path in (socket_path, pid_file):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
    return 0


def ask(socket_path: Path, request: dict[str, Any], timeout_s: float = 5.0) -> dict[str, Any]:
    """One request to a running service (used by tests and `predict tail --service`)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(socket_path))
        sock.sendall((json.dumps(request) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply
