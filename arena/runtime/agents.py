"""Agent folders and their ``agent.toml`` manifests: find, validate, build, launch.

An agent is a folder holding ``agent.toml``::

    name = "greedy"                 # 1..64 characters: letters, digits, - _ .
    version = "1.0.0"
    language = "python"
    command = ["{python}", "agent.py"]   # run in the folder; {python} is this Python
    build = ["cc", "-O2", "-o", "agent", "agent.c"]   # optional, run in the folder first
    description = "..."             # optional
    variants = ["schnapsen"]        # optional: the games it plays (default: the two-handed ones)
    [env]                           # optional extra environment variables
    OMP_NUM_THREADS = "1"

An agent is named on the command line by its folder path, by the path of a manifest file
(``folder/other.toml``: one folder may hold several agents that share its files), or by
its manifest name, which is looked up among the folders of ``./agents`` and of the bundled
agents (the checkout's ``agents/``, shipped in the package as ``arena/bundled``). An
installed agent with a build step is built in a copy under the user's cache folder
(`build_home`). A sandboxed agent gets a copy of its folder and nothing else, so everything
its command needs must be inside the folder.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from ..errors import UserError, read_toml
from ..game import ALL_PRESETS, Variant
from . import toolchain
from .process import Launch, run_build

MANIFEST = "agent.toml"
#: The two-handed games, which a manifest plays unless its ``variants`` says otherwise:
#: every two-handed variant belongs to one, by its deck.
FAMILIES = ("sixty-six", "schnapsen")
#: Every game a manifest's ``variants`` may name: the two-handed ones, then the three- and
#: four-handed ones by their preset's name (a variant belongs to the one of its form and
#: number of players).
GAMES = tuple(ALL_PRESETS)
REQUIRED = ("name", "version", "language", "command")
OPTIONAL = ("build", "description", "env", "variants")
_HERE = Path(__file__).resolve().parent.parent  # the arena package
#: The bundled agents: shipped inside the package (``arena/bundled``, an installed wheel), or
#: the checkout's ``agents/`` (a source tree or an editable install).
BUNDLED = next((p for p in (_HERE / "bundled", _HERE.parent / "agents") if p.is_dir()), _HERE / "bundled")
#: Whether they are an installed copy (site-packages: maybe read-only, maybe shared by users).
INSTALLED = BUNDLED.parent == _HERE
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
    variants: tuple[str, ...] = FAMILIES  # the games it plays: "sixty-six", "schnapsen"

    @property
    def manifest_path(self) -> Path:
        return self.folder / self.manifest_file

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def plays(self, variant: Variant) -> bool:
        """Whether the agent plays ``variant``: its game (`family`) is one of ``variants``."""
        return family(variant) in self.variants

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


def family(variant: Variant) -> str:
    """The game a variant is a rule set of: ``sixty-six`` (24 cards) or ``schnapsen`` (20)
    for two players; else the preset of its form and number of players (``three-pagat``...)."""
    if variant.form == "two_handed":
        return "sixty-six" if variant.deck == 24 else "schnapsen"
    return next(n for n, p in ALL_PRESETS.items() if (p.form, p.players) == (variant.form, variant.players))


def table_problem(variant: Variant) -> str | None:
    """Why a run of many matches (a tournament, a comparison, a ladder) cannot be made of
    ``variant``: their schedules, store and ratings are for two seats so far, so a three- or
    four-handed game is played one match at a time (`arena match A B C [D]`). None for a
    two-handed game."""
    if variant.players == 2 and variant.form == "two_handed":
        return None
    seats = " ".join("ABCD"[: variant.players])
    return (
        f"{variant.name} is a {variant.players}-player game; tournaments, comparisons and ladders play "
        f"two-handed games only so far (sixty-six, schnapsen): `arena match {seats} --variant {variant.name}` "
        "plays one match"
    )


def unplayed(manifests: Sequence[Manifest], variant: Variant, *, tables: bool = False) -> str | None:
    """Why one of the agents cannot be paired into ``variant`` (a game of more than two
    seats where only two-seat games are run: tournaments and ladders, unless ``tables``;
    or their manifest's ``variants`` leave it out), or None if every one plays it."""
    problem = None if tables else table_problem(variant)
    if problem:
        return problem
    for m in manifests:
        if not m.plays(variant):
            return (
                f"agent {m.name!r} plays only {', '.join(m.variants)} (field 'variants' of "
                f"{m.manifest_path}), not {variant.name}"
            )
    return None


def require_variant(manifests: Sequence[Manifest], variant: Variant, where: str, *, tables: bool = False) -> None:
    """`UserError` (one line, naming ``where``) if an agent does not play ``variant``:
    refused before any process starts."""
    problem = unplayed(manifests, variant, tables=tables)
    if problem:
        raise UserError(f"{where}: {problem}")


def load_manifest(folder: Path) -> Manifest:
    """Read and validate ``folder/agent.toml`` (or ``folder`` itself when it is a ``.toml``
    file); `UserError` names the file and field (every missing required field at once)."""
    if folder.suffix == ".toml" and folder.is_file():
        path, folder = folder, folder.parent
    else:
        path = folder / MANIFEST
    where = str(path)
    data = read_toml(path, f"{folder}: no {MANIFEST} in this folder")
    known = set(REQUIRED) | set(OPTIONAL)
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(f"{where}: unknown field '{unknown[0]}' (known: {', '.join(sorted(known))})")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise UserError(
            f"{where}: missing field{'s' if len(missing) > 1 else ''} {', '.join(repr(k) for k in missing)} "
            f"(required: {', '.join(REQUIRED)}; optional: {', '.join(OPTIONAL)})"
        )
    name = _field(data, "name", where, str)
    if not _NAME.match(name):
        raise UserError(f"{where}: field 'name' must be 1..64 letters, digits, '-', '_' or '.', got {name!r}")
    env = _field(data, "env", where, dict, required=False) or {}
    for k, v in env.items():
        if not isinstance(v, str):
            raise UserError(f"{where}: env variable '{k}' must be a string, got {v!r}")
    variants = _field(data, "variants", where, list, required=False) or FAMILIES
    for v in variants:
        if v not in GAMES:
            raise UserError(f"{where}: field 'variants' names {v!r}; the games are {', '.join(GAMES)}")
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
        variants=tuple(v for v in GAMES if v in variants),
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
        return build_home(load_manifest(path))
    if path.is_dir():
        raise UserError(f"{spec}: no {MANIFEST} in this folder")
    known = discover()
    if spec in known:
        return build_home(known[spec])
    raise UserError(
        f"unknown agent {spec!r}: not a folder with {MANIFEST}, nor a name in "
        f"{' or '.join(str(p) for p in search_path()) or 'agents/'} (known: {', '.join(sorted(known)) or 'none'})"
    )


def cache_dir() -> Path:
    """This user's cache folder for agents' builds: ``$XDG_CACHE_HOME/sixtysix-arena/builds``
    (by default ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "sixtysix-arena", "builds")


def build_home(manifest: Manifest) -> Manifest:
    """The agent as it is built and run: itself, or, for an agent with a build step that
    was installed with the package (site-packages may be read-only or shared by users)
    or whose folder this user cannot write, a copy of its folder in `cache_dir`, one per
    content hash, where the build writes its outputs."""
    if not manifest.build:
        return manifest
    installed = INSTALLED and manifest.folder.is_relative_to(BUNDLED)
    if not installed and os.access(manifest.folder, os.W_OK):
        return manifest
    target = cache_dir() / f"{manifest.name}-{manifest.content_hash()[:16]}"
    if not (target / manifest.manifest_file).is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        # Copied beside, then renamed: another arena making the same copy meanwhile wins.
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            shutil.copytree(
                manifest.folder, tmp, symlinks=True, dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
            )  # fmt: skip
            os.chmod(tmp, 0o755)
            try:
                os.rename(tmp, target)
            except OSError:
                if not (target / manifest.manifest_file).is_file():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return dataclasses.replace(manifest, folder=target)


async def build(manifest: Manifest, timeout_s: float = 300.0) -> None:
    """Run the manifest's build command, if any; `UserError` with the output's end if it fails."""
    if not manifest.build:
        return
    status, output = await run_build(manifest.build, manifest.folder, timeout_s)
    if status != 0:
        tail = " ".join(output.split())[-400:]
        raise UserError(f"{manifest.folder / MANIFEST}: build failed (status {status}): {tail}")


def build_all(manifests: list[Manifest]) -> None:
    """Check that the programs the agents need are here (`arena.runtime.toolchain`: one line
    naming what is missing and how to get it), then build each distinct agent once
    (synchronous entry point for commands)."""
    toolchain.require(manifests)
    seen = set()
    for m in manifests:
        if m.folder not in seen:
            seen.add(m.folder)
            trio.run(build, m)
