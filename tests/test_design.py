"""DESIGN.md stays a map a newcomer can follow: at most 500 lines, and every repository path
it names exists (issue 38).

What counts as a path. Every `backquoted` span outside fenced code blocks (fenced blocks
are dropped first, so keep paths out of them; a span may wrap onto the next line) is a
path when it has no whitespace and either contains a `/` or ends with one of
PATH_SUFFIXES. Skipped, because they name no file in the repository: URLs (`scheme://`),
environment variables (`$…`), home paths (`~…`), options (`-…`) and anything with `<` or
`>` (templates with `<…>` placeholders, version bounds). A path followed by `:name`
(`errors.py:UsageError`) is checked without the name.

How it resolves. It is tried as written, relative to the repository root, and then under
each of SHORT_FORM_PREFIXES in turn (the short forms DESIGN.md declares: `replay/run.py`
for `src/tailcast/replay/run.py`, `engine/p2p.rs` for
`crates/replay-engine/src/engine/p2p.rs`). The first existing candidate wins. A path
ending in `/` must be a directory. A path with `*` is a glob, and at least one file must
match it. Paths under `../shared/` resolve against the shared folder beside the checkout
(tests/conftest.py's SHARED_DATA, whose parent it is). When that folder is absent they are
skipped, except in CI, where the test fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED_DATA, in_ci

DESIGN = REPO / "DESIGN.md"
MAX_LINES = 500

PATH_SUFFIXES = (
    ".py", ".pyi", ".rs", ".toml", ".md", ".j2", ".sbatch", ".parquet", ".json", ".c", ".h",
    ".txt", ".lua", ".lock", ".sh",
)  # fmt: skip
SHORT_FORM_PREFIXES = (
    "src/tailcast/",
    "crates/replay-engine/src/",
    "crates/replay-py/src/",
    "crates/",
)
SHARED_PREFIX = "../shared/"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`]+)`")
_SKIP_START = ("$", "~", "-")


def path_tokens(markdown: str) -> list[str]:
    """The backquoted spans of `markdown` that name repository paths (module docstring)."""
    # A code span may wrap onto the next line (Markdown reads the break as a space).
    text = _FENCE.sub("", markdown).replace("\n", " ")
    found = []
    for span in _SPAN.findall(text):
        token = span.strip()
        if not token or any(c.isspace() for c in token):
            continue
        if "://" in token or token.startswith(_SKIP_START) or "<" in token or ">" in token:
            continue
        head, colon, _name = token.partition(":")
        if colon and head.endswith(PATH_SUFFIXES):
            token = head
        if "/" in token or token.endswith(PATH_SUFFIXES):
            found.append(token)
    return found


def _exists(base: Path, relative: str) -> bool:
    if "*" in relative:
        return any(base.glob(relative))
    if relative.endswith("/"):
        return (base / relative).is_dir()
    return (base / relative).exists()


def resolves(token: str, repo: Path = REPO, shared: Path | None = None) -> bool | None:
    """True when `token` names something that exists, False when it does not, None when it
    lies under ../shared/ and that folder is not on this machine."""
    if token.startswith(SHARED_PREFIX):
        if shared is None or not shared.is_dir():
            return None
        return _exists(shared, token[len(SHARED_PREFIX) :])
    candidates = [token] + [prefix + token for prefix in SHORT_FORM_PREFIXES]
    return any(_exists(repo, c) for c in candidates)


def _shared_root() -> Path:
    return SHARED_DATA.parent


def test_design_has_at_most_500_lines() -> None:
    lines = DESIGN.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"DESIGN.md has {len(lines)} lines (at most {MAX_LINES})"


def test_every_path_design_names_exists() -> None:
    tokens = path_tokens(DESIGN.read_text(encoding="utf-8"))
    assert len(tokens) > 50, "the extractor found almost no paths: is it still working?"
    shared = _shared_root()
    missing, skipped = [], []
    for token in dict.fromkeys(tokens):
        found = resolves(token, REPO, shared)
        if found is None:
            skipped.append(token)
        elif not found:
            missing.append(token)
    if skipped and in_ci():
        pytest.fail(f"{shared} is missing in CI; DESIGN.md names {skipped}")
    assert not missing, f"DESIGN.md names paths that do not exist: {missing}"


# The extractor and the resolver, on tokens whose answer is known.


def test_a_stale_engine_path_is_caught() -> None:
    # The old DESIGN.md cited engine/queue.rs; the file is engine/event_queue.rs.
    assert path_tokens("the event queue (`engine/queue.rs`)") == ["engine/queue.rs"]
    assert resolves("engine/queue.rs") is False
    assert resolves("engine/event_queue.rs") is True


def test_short_forms_full_paths_folders_and_globs() -> None:
    assert resolves("replay/run.py") is True
    assert resolves("src/tailcast/replay/run.py") is True
    assert resolves("crates/replay-py/src/poll.rs") is True
    assert resolves("replay-engine/build.rs") is True
    assert resolves("fabric/models/") is True
    assert resolves("replay/run.py/") is False  # a file named as a folder
    assert resolves("src/tailcast/replay/fabrics/*.toml") is True
    assert resolves("src/tailcast/replay/fabrics/*.yaml") is False
    assert resolves("crates/replay-engine/tests/closed_forms*.rs") is True
    assert resolves("errors.py") is True
    assert resolves("error.py") is False


def test_what_is_not_a_path() -> None:
    text = (
        "`$TAILCAST_HOME/models/m/model.json` `~/.cache/tailcast/tracer/` "
        "`https://example.org/a.md` `--coll bcast=pipeline:segsize=128K` `runs/<id>` "
        "`tailcast.table` `b = N_c / N_t` `n_c_dup` `--stream/--in-memory`"
    )
    assert path_tokens(text) == []
    assert path_tokens("`errors.py:UsageError` `Cargo.toml`") == ["errors.py", "Cargo.toml"]
    fenced = "```\nengine/queue.rs\n```\n`engine/p2p.rs`"
    assert path_tokens(fenced) == ["engine/p2p.rs"]
    # a span wrapped over two lines keeps the spans after it paired
    wrapped = "`sbatch\n--dependency` then `engine/queue.rs`"
    assert path_tokens(wrapped) == ["engine/queue.rs"]


def test_shared_paths_resolve_beside_the_checkout(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "seeds").mkdir(parents=True)
    (shared / "seeds" / "001_abc.txt").write_text("seed")
    assert resolves("../shared/seeds/", REPO, shared) is True
    assert resolves("../shared/seeds/001_*.txt", REPO, shared) is True
    assert resolves("../shared/seeds/009_*.txt", REPO, shared) is False
    assert resolves("../shared/seeds/", REPO, tmp_path / "absent") is None
