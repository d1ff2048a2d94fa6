"""Agent folders and their ``agent.toml`` manifests: find, validate, build, launch.

An agent is a folder holding ``agent.toml``::

    name = "greedy"                 # 1..64 characters: letters, digits, - _ .
    version = "1.0.0"
    language = "python"
    command = ["{python}", "agent.py"]   # run in the folder; {python} is this Python
    build = ["cc", "-O2", "-o", "agent", "agent.c"]   # optional, run in the folder first
    description = "..."             # optional
    [env]                           # optional extra environment variables
    OMP_NUM_THREADS = "1"

An agent is named on the command line by its folder path, by the path of a manifest file
(``folder/other.toml``: one folder may hold several agents that share its files), or by
its manifest name, which is looked up among the folders of ``./agents`` and of the bundled
``agents/``. A sandboxed agent gets a copy of its folder and nothing else, so everything
its command needs must be inside the folder.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Any

import trio

from .errors import UserError, read_toml
from .process import Launch, run_build

MANIFEST = "agent.toml"
BUNDLED = Path(__file__).resolve().parent.parent / "agents"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclasses.dataclass(frozen=True)
class Manifest:
    """A validated agent manifest and the folder it came from."""

    name: str
    version: str
    language: str
    command: tuple[str, ...]
    folder: Path
    build: tuple[str, ...] | None = None
    description: str = ""
    env: tuple[tuple[str, str], ...] = ()
    manifest_file: str = MANIFEST  # the manifest's file name in the folder

    @property
    def manifest_path(self) -> Path:
        return self.folder / self.manifest_file

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def files(self) -> list[Path]:
        """The folder's own files, sorted, leaving out build outputs and caches: what its
        ``.gitignore`` lists, dot-files, ``__pycache__``. Symlinks are listed as such."""
        ignore = ["__pycache__", "*.pyc", ".*"]
        gi = self.folder / ".gitignore"
        if gi.is_file():
            ignore += [x.strip().strip("/") for x in gi.read_text().splitlines() if x.strip() and x[0] != "#"]
        out = []
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder)
            if any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in ignore):
                continue
            if path.is_symlink() or path.is_file():
                out.append(path)
        return out

    def content_hash(self) -> str:
        """SHA-256 over `files` (paths and bytes; a symlink by its target's path)."""
        h = hashlib.sha256()
        for path in self.files():
            rel = path.relative_to(self.folder)
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            h.update(f"{rel.as_posix()}\0{len(data)}\0".encode())
            h.update(data)
        return h.hexdigest()

    def row(self) -> dict[str, str]:
        """The agent as the store records it."""
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "content_hash": self.content_hash(),
            "folder": str(self.folder),
        }

    def launch(self, extra_env: dict[str, str] | None = None) -> Launch:
        """How to start this agent: placeholders filled, run in its folder."""
        command = [sys.executable if part == "{python}" else part for part in self.command]
        env = dict(os.environ)
        env.update(self.env)
        env.update(extra_env or {})
        return Launch(command=command, cwd=self.folder, env=env, name=self.name)


def _field(data: dict[str, Any], key: str, where: str, kind: type, required: bool = True) -> Any:
    if key not in data:
        if required:
            raise UserError(f"{where}: missing field '{key}'")
        return None
    value = data[key]
    if kind is list:
        if not isinstance(value, list) or not value or not all(isinstance(x, str) and x for x in value):
            raise UserError(f"{where}: field '{key}' must be a non-empty list of strings, got {value!r}")
        return tuple(value)
    if not isinstance(value, kind):
        raise UserError(f"{where}: field '{key}' must be a {kind.__name__}, got {value!r}")
    return value


def load_manifest(folder: Path) -> Manifest:
    """Read and validate ``folder/agent.toml`` (or ``folder`` itself when it is a ``.toml``
    file); `UserError` names the file and field."""
    if folder.suffix == ".toml" and folder.is_file():
        path, folder = folder, folder.parent
    else:
        path = folder / MANIFEST
    where = str(path)
    data = read_toml(path, f"{folder}: no {MANIFEST} in this folder")
    known = {"name", "version", "language", "command", "build", "description", "env"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(f"{where}: unknown field '{unknown[0]}' (known: {', '.join(sorted(known))})")
    name = _field(data, "name", where, str)
    if not _NAME.match(name):
        raise UserError(f"{where}: field 'name' must be 1..64 letters, digits, '-', '_' or '.', got {name!r}")
    env = _field(data, "env", where, dict, required=False) or {}
    for k, v in env.items():
        if not isinstance(v, str):
            raise UserError(f"{where}: env variable '{k}' must be a string, got {v!r}")
    return Manifest(
        name=name,
        version=_field(data, "version", where, str),
        language=_field(data, "language", where, str),
        command=_field(data, "command", where, list),
        folder=folder.resolve(),
        build=_field(data, "build", where, list, required=False),
        description=_field(data, "description", where, str, required=False) or "",
        env=tuple(sorted(env.items())),
        manifest_file=path.name,
    )


def search_path() -> list[Path]:
    """Where agents are looked up by name: ./agents, then the bundled agents."""
    out = []
    for p in (Path.cwd() / "agents", BUNDLED):
        if p.is_dir() and p.resolve() not in out:
            out.append(p.resolve())
    return out


def discover() -> dict[str, Manifest]:
    """Every valid agent on the search path, by manifest name (the first found wins).

    A folder with a broken manifest is skipped here, so that it cannot hide the others;
    naming it by its path reports what is wrong with it."""
    found: dict[str, Manifest] = {}
    for root in search_path():
        for folder in sorted(root.iterdir()):
            if (folder / MANIFEST).is_file():
                try:
                    m = load_manifest(folder)
                except UserError:
                    continue
                found.setdefault(m.name, m)
    return found


def resolve(spec: str) -> Manifest:
    """An agent by folder path or by manifest name; `UserError` if neither is found."""
    path = Path(spec)
    if (path / MANIFEST).is_file() or (path.suffix == ".toml" and path.is_file()):
        return load_manifest(path)
    if path.is_dir():
        raise UserError(f"{spec}: no {MANIFEST} in this folder")
    known = discover()
    if spec in known:
        return known[spec]
    raise UserError(
        f"unknown agent {spec!r}: not a folder with {MANIFEST}, nor a name in "
        f"{' or '.join(str(p) for p in search_path()) or 'agents/'} (known: {', '.join(sorted(known)) or 'none'})"
    )


async def build(manifest: Manifest, timeout_s: float = 300.0) -> None:
    """Run the manifest's build command, if any; `UserError` with the output's end if it fails."""
    if not manifest.build:
        return
    status, output = await run_build(manifest.build, manifest.folder, timeout_s)
    if status != 0:
        tail = " ".join(output.split())[-400:]
        raise UserError(f"{manifest.folder / MANIFEST}: build failed (status {status}): {tail}")


def build_all(manifests: list[Manifest]) -> None:
    """Build each distinct agent once (synchronous entry point for commands)."""
    seen = set()
    for m in manifests:
        if m.folder not in seen:
            seen.add(m.folder)
            trio.run(build, m)
