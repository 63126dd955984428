"""Dataset versions under one output root: `ROOT/versions/<run-date>-<n>/`, an index and a `latest` pointer.

A scheduled run allocates a new version folder (never an earlier one, unless it resumes its own unfinished
run), writes a dataset or pipeline into it, and only then publishes it: the index `ROOT/versions.json` gains
its entry and `ROOT/latest.json` (a small JSON file, replaced atomically; not a symlink) points at it. A run
that fails publishes nothing, so `latest` keeps naming the previous complete version.

    ROOT/latest.json        {"format": "synth-latest/1", "version": "20261204-3", "path": "versions/20261204-3", ...}
    ROOT/versions.json      {"format": "synth-versions/1", "versions": [{name, ordinal, seed, config_hash, ...}]}
    ROOT/versions/<name>/   a synth dataset or multi-stage OUT
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from synth.core.errors import InputError, OutputDirError
from synth.core.sink import STATE_DIR, naming_errors, write_json_atomic

VERSIONS_DIR = "versions"
LATEST_NAME = "latest.json"
INDEX_NAME = "versions.json"
LOCK_NAME = ".versions.lock"
LATEST_FORMAT = "synth-latest/1"
INDEX_FORMAT = "synth-versions/1"
TRASH_PREFIX = ".trash-"
_NAME = re.compile(r"^(\d{8})-(\d+)$")

Status = Literal["complete", "running", "incomplete"]


@dataclass(frozen=True)
class Version:
    """One version folder: its name `<YYYYMMDD>-<ordinal>`, its place and what state it is in."""

    name: str
    ordinal: int
    path: Path
    status: Status
    entry: dict[str, Any] | None = None

    def to_dict(self, root: Path) -> dict[str, Any]:
        """JSON-ready description (paths relative to the root)."""
        extra = {k: v for k, v in (self.entry or {}).items() if k not in ("name", "ordinal", "path")}
        return {"name": self.name, "ordinal": self.ordinal, "path": self.path.relative_to(root).as_posix()} | {
            "status": self.status,
            **extra,
        }


def version_name(run_date: dt.date, ordinal: int) -> str:
    """`20261204-3`: the run's date (UTC) and the root-wide ordinal (1, 2, ... never reused)."""
    return f"{run_date:%Y%m%d}-{ordinal}"


def is_versioned_root(path: str | Path) -> bool:
    """Whether `path` is a versioned output root (it has a latest pointer or a version index)."""
    root = Path(path)
    return (root / LATEST_NAME).is_file() or (root / INDEX_NAME).is_file()


def resolve_latest(path: str | Path) -> Path:
    """The folder a dataset path means: a versioned root resolves to its latest version, anything else to itself."""
    root = Path(path)
    if not (root / LATEST_NAME).is_file() or (root / "manifest.json").exists():
        return root
    return VersionedRoot(root).latest_path()


def _is_running(folder: Path) -> bool:
    """Whether a synth run holds the lock of `folder` (a killed run's flock is gone with its process)."""
    lock = folder / STATE_DIR / "lock"
    try:
        handle = lock.open("r")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


@dataclass(frozen=True)
class VersionedRoot:
    """The versions of one output root; mutations hold a short exclusive lock on `ROOT/.versions.lock`."""

    root: Path

    @property
    def versions_dir(self) -> Path:
        return self.root / VERSIONS_DIR

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Serialise allocation, publication and pruning between runs sharing this root (blocks briefly)."""
        path = self.root / LOCK_NAME
        with naming_errors(path):
            self.versions_dir.mkdir(parents=True, exist_ok=True)
            handle = path.open("a+")
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _read_json(self, name: str, expected_format: str) -> dict[str, Any] | None:
        path = self.root / name
        if not path.is_file():
            return None
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            msg = f"{path}: unreadable ({type(error).__name__}: {error}); restore it or remove it to start over"
            raise InputError(msg) from None
        if not isinstance(value, dict) or value.get("format") != expected_format:
            msg = f"{path}: not a {expected_format} file; restore it or remove it to start over"
            raise InputError(msg)
        return value

    def index(self) -> list[dict[str, Any]]:
        """The published versions' entries, oldest first."""
        data = self._read_json(INDEX_NAME, INDEX_FORMAT)
        return list(data["versions"]) if data else []

    def latest(self) -> dict[str, Any] | None:
        """The latest pointer, or None before the first version is published."""
        return self._read_json(LATEST_NAME, LATEST_FORMAT)

    def latest_path(self) -> Path:
        """The folder of the latest complete version; a one-line `InputError` when there is none."""
        pointer = self.latest()
        if pointer is None:
            msg = f"{self.root}: no complete version yet (no {LATEST_NAME}); wait for the first run to finish"
            raise InputError(msg)
        path = self.root / pointer["path"]
        if not path.is_dir():
            msg = f"{self.root / LATEST_NAME}: names {pointer['path']}, which is missing; restore it or rerun"
            raise InputError(msg)
        return path

    def versions(self) -> list[Version]:
        """Every version folder, oldest first, with its status."""
        published = {entry["name"]: entry for entry in self.index()}
        found = []
        if self.versions_dir.is_dir():
            for path in self.versions_dir.iterdir():
                match = _NAME.match(path.name)
                if not match or not path.is_dir():
                    continue
                entry = published.get(path.name)
                status: Status = "complete" if entry else "running" if _is_running(path) else "incomplete"
                found.append(Version(path.name, int(match.group(2)), path, status, entry))
        return sorted(found, key=lambda v: v.ordinal)

    def allocate(self, run_date: dt.date, *, resume: Callable[[Version], bool] | None = None) -> Version:
        """A folder for a new run: the newest unfinished version if `resume` accepts it, else a new one.

        Call with the lock held; the new folder is created here, so two runs never get the same one.
        """
        existing = self.versions()
        newest = existing[-1] if existing else None
        if newest is not None and newest.status == "incomplete" and resume is not None and resume(newest):
            return newest
        ordinal = self.next_ordinal()
        path = self.versions_dir / version_name(run_date, ordinal)
        with naming_errors(path):
            path.mkdir(parents=True)
        return Version(path.name, ordinal, path, "running")

    def next_ordinal(self) -> int:
        """The ordinal a new version would get now (for the seed of an advancing-seed schedule)."""
        existing = self.versions()
        pointer = self.latest()
        return max([v.ordinal for v in existing] + [int(pointer["ordinal"]) if pointer else 0]) + 1

    def publish(self, version: Version, info: dict[str, Any]) -> dict[str, Any] | None:
        """Record a complete version in the index, then point `latest` at it unless a newer one is latest.

        Call with the lock held. Returns the new pointer, or None when `latest` stays on a newer version.
        """
        entries = [e for e in self.index() if e["name"] != version.name]
        entry = {"name": version.name, "ordinal": version.ordinal, "path": f"{VERSIONS_DIR}/{version.name}"} | info
        entries.append(entry)
        entries.sort(key=lambda e: e["ordinal"])
        write_json_atomic(self.root / INDEX_NAME, {"format": INDEX_FORMAT, "versions": entries})
        current = self.latest()
        if current is not None and int(current["ordinal"]) > version.ordinal:
            return None
        pointer = {"format": LATEST_FORMAT, "version": version.name} | entry
        write_json_atomic(self.root / LATEST_NAME, pointer)
        return pointer

    def prune(self, keep: int) -> list[str]:
        """Delete all but the newest `keep` complete versions (never `latest`), and unfinished versions older
        than `latest` that no run holds. Call with the lock held; returns the deleted names.

        A folder is renamed to a trash name before it is deleted, so an interrupted prune never leaves a
        half-deleted folder that looks like a version.
        """
        if keep < 1:
            msg = f"retention keep={keep}: keep at least 1 version"
            raise OutputDirError(msg)
        pointer = self.latest()
        latest_name = pointer["version"] if pointer else None
        latest_ordinal = int(pointer["ordinal"]) if pointer else 0
        versions = self.versions()
        complete = [v for v in versions if v.status == "complete"]
        doomed = [v for v in complete[: max(0, len(complete) - keep)] if v.name != latest_name]
        doomed += [v for v in versions if v.status == "incomplete" and v.ordinal < latest_ordinal]
        names = {v.name for v in doomed}
        if names:
            entries = [e for e in self.index() if e["name"] not in names]
            write_json_atomic(self.root / INDEX_NAME, {"format": INDEX_FORMAT, "versions": entries})
        for version in doomed:
            trash = version.path.with_name(TRASH_PREFIX + version.name)
            version.path.rename(trash)
        for trash in self.versions_dir.glob(TRASH_PREFIX + "*"):
            shutil.rmtree(trash, ignore_errors=True)
        return sorted(names, key=lambda n: int(n.rsplit("-", 1)[1]))

    def describe(self) -> dict[str, Any]:
        """Everything `synth inspect ROOT` shows about the versions, JSON-ready."""
        return {
            "out": str(self.root),
            "latest": (self.latest() or {}).get("version"),
            "versions": [v.to_dict(self.root) for v in self.versions()],
        }
