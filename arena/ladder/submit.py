"""``arena submit``: take an agent folder into a ladder, or check that it would be taken.

In order, each step stopping at the first problem with one line naming it:

1. the manifest: every field present and of its type (`arena.runtime.agents.load_manifest`);
2. the folder: its files (what the content hash covers: build outputs, dot-files and
   caches left out) within the ladder's size and count limits, no symlink leading out of
   it, no command or build argument naming a path outside it, the program of the command
   and of the build found (in the folder, or on the sandbox's ``PATH``);
3. a copy of just those files, built in the sandbox with its limits and a deadline
   (`stage`: ``arena check`` runs its agent from the same kind of copy, so that a folder
   that passes the check does not fail here for a file the copy leaves out);
4. the conformance suite (`arena.play.conformance`) against the built copy, in the sandbox,
   in the games the manifest declares (``variants``; a ladder's own game must be one);
5. the copy moved to ``agents/<name>/<version>-<hash12>`` in the ladder, made read-only,
   and entered in the ladder's store as ``name@version``. A new version of a name
   replaces the old one in the schedule; the old one keeps its record.

Submitting the same name, version and content again changes nothing; the same name and
version with other content is refused (give it a new version).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import trio

from ..errors import UserError
from ..runtime.agents import MANIFEST, Manifest, family, load_manifest, require_variant, resolve
from ..runtime.process import run_build
from ..runtime.sandbox import Policy, Sandbox, chown_tree, private
from .rounds import LadderConfig, SubmitRules, open_store


@dataclasses.dataclass(frozen=True)
class Submitted:
    key: str  # name@version
    status: str  # "new", "unchanged", "checked" (no ladder)
    folder: Path | None
    retired: list[str]


def validate(folder: Path, rules: SubmitRules) -> Manifest:
    """Steps 1 and 2: the manifest and the folder; returns the manifest."""
    m = resolve(str(folder))
    where = m.folder / MANIFEST
    files = m.files()
    size = sum(p.lstat().st_size for p in files)
    if size > rules.max_mb << 20:
        raise UserError(
            f"{m.folder}: the folder is too large ({size / (1 << 20):.1f} MiB; the limit is {rules.max_mb} MiB)"
        )
    if len(files) > rules.max_files:
        raise UserError(f"{m.folder}: the folder has too many files ({len(files)}; the limit is {rules.max_files})")
    for p in files:
        if p.is_symlink():
            target = (p.parent / os.readlink(p)).resolve()
            if not target.is_relative_to(m.folder):
                raise UserError(f"{p}: a symlink that leads out of the agent's folder (to {target})")
    for field, argv in (("command", m.command), ("build", m.build or ())):
        for k, arg in enumerate(argv):
            if arg == "{python}" or arg.startswith("-"):
                continue
            if os.path.isabs(arg):
                if k == 0 and not Path(arg).resolve().is_relative_to(m.folder):
                    continue  # an absolute program (/usr/bin/node) is checked below
                raise UserError(f"{where}: field '{field}' names an absolute path {arg!r}; use one inside the folder")
            if "/" in arg or arg.startswith(".."):
                if not (m.folder / arg).resolve().is_relative_to(m.folder):
                    raise UserError(f"{where}: field '{field}' names {arg!r}, which is outside the agent's folder")
    for field, argv in (("command", m.command), ("build", m.build)):
        if argv and argv[0] != "{python}" and "/" not in argv[0] and shutil.which(argv[0]) is None:
            raise UserError(f"{where}: field '{field}': program {argv[0]!r} is not found on PATH")
        if argv and os.path.isabs(argv[0]) and not os.access(argv[0], os.X_OK):
            raise UserError(f"{where}: field '{field}': program {argv[0]!r} is not an executable file")
    if m.build is None:
        _check_program(m, m.folder)
    return m


def _check_program(m: Manifest, folder: Path, origin: Manifest | None = None) -> None:
    """A command that names a file in the folder must be there (after the build)."""
    where = (origin or m).manifest_path
    prog = m.command[0]
    if prog != "{python}" and "/" in prog and not os.path.isabs(prog):
        path = folder / prog
        if not path.is_file():
            raise UserError(f"{where}: field 'command': program {prog!r} is not in the folder"
                            + (" after the build" if m.build else ""))  # fmt: skip
        if not os.access(path, os.X_OK):
            raise UserError(f"{where}: field 'command': {prog!r} is not executable (chmod +x)")


def _copy(m: Manifest, dest: Path) -> None:
    """Copy the files the content hash covers (the manifest included) to ``dest``."""
    dest.mkdir(parents=True)
    for p in m.files():
        rel = p.relative_to(m.folder)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink():
            os.symlink(os.readlink(p), dest / rel)
        else:
            shutil.copy2(p, dest / rel)
    if m.manifest_path.name != MANIFEST:  # one of several manifests in a folder: it becomes the copy's
        shutil.copy2(m.manifest_path, dest / MANIFEST)


def stage(m: Manifest, work: Path, sandbox: Sandbox, build_timeout_s: float) -> Manifest:
    """Step 3: copy the files `Manifest.files` lists (the manifest included) to ``work``
    (which must not exist), build the copy in ``sandbox`` and check that its command is
    there; returns the copy's manifest. `UserError`s name the original manifest."""
    _copy(m, work)
    copy = load_manifest(work)
    trio.run(_build, copy, m, work, sandbox, build_timeout_s)
    _check_program(copy, work, origin=m)
    return copy


LEFT_OUT = "dot-files and what .gitignore lists are not part of an agent"


def left_out(m: Manifest, work: Path) -> list[str]:
    """What of ``m``'s folder its staged copy at ``work`` lacks (after the build): dot-files
    and what ``.gitignore`` lists, by their first path component (``.data/``). Version
    control files and Python caches are not named: no agent needs them to run."""
    names: set[str] = set()
    for path in m.folder.rglob("*"):
        rel = path.relative_to(m.folder)
        if rel.parts[0] in (".git", ".gitignore", "__pycache__") or "__pycache__" in rel.parts:
            continue
        if path.suffix == ".pyc" or not (path.is_file() or path.is_symlink()) or os.path.lexists(work / rel):
            continue
        names.add(rel.parts[0] + ("/" if len(rel.parts) > 1 else ""))
    return sorted(names)


def _read_only(folder: Path) -> None:
    for dirpath, _dirs, filenames in os.walk(folder):
        for name in filenames:
            p = Path(dirpath, name)
            if not p.is_symlink():
                p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


async def _build(m: Manifest, origin: Manifest, folder: Path, sandbox: Sandbox, timeout_s: float) -> None:
    if not m.build:
        return
    command, env = sandbox.wrap_build(list(m.build), folder)
    status, output = await run_build(command, folder, timeout_s, env=env)
    if status != 0:
        tail = " ".join(output.split())[-300:]
        raise UserError(f"{origin.manifest_path}: build failed (status {status}): {tail}")


async def _check(
    m: Manifest, origin: Manifest, sandbox: Sandbox, logs: Path, say: Callable[[str], None], games: list[str] | None
) -> None:
    from ..play.conformance import check

    failed = []

    def report(item: object) -> None:
        say(f"{'PASS' if item.ok else 'FAIL'}  {item.name}: {item.detail}")
        if not item.ok:
            failed.append(item)

    await check(m, report, logs=logs, sandbox=sandbox, games=games)
    if failed:
        f = failed[0]
        missing = left_out(origin, m.folder)
        hint = f" (the stored copy leaves out {', '.join(missing)}: {LEFT_OUT})" if missing else ""
        raise UserError(f"{origin.manifest_path}: conformance check failed: {f.name}: {f.detail}{hint}")


def submit(
    path: Path,
    ladder: LadderConfig | None,
    *,
    policy: Policy | None = None,
    say: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
) -> Submitted:
    """Validate, build, check and (with a ladder) enter the agent at ``path``."""
    rules = ladder.submit if ladder else SubmitRules()
    policy = policy or (ladder.sandbox if ladder else Policy())
    m = validate(path, rules)
    if ladder is not None:
        require_variant([m], ladder.variant, f"ladder {ladder.name!r} ({ladder.folder})", tables=True)
    digest = m.content_hash()
    key = f"{m.name}@{m.version}"
    store = open_store(ladder) if ladder else None
    try:
        if store is not None:
            have = store.entry(key)
            if have is not None:
                if have["content_hash"] == digest:
                    return Submitted(key, "unchanged", Path(have["folder"]), [])
                raise UserError(
                    f"{m.folder / MANIFEST}: {key} is already in the ladder with other content (hash "
                    f"{have['content_hash'][:12]}, this is {digest[:12]}); give it a new version"
                )
        base = ladder.agents_dir if ladder else None
        staging = Path(tempfile.mkdtemp(prefix=".submit-", dir=base))
        try:
            work = staging / "agent"
            with Sandbox(policy, warn=lambda s: say(f"arena: {s}")) as sandbox:
                copy = stage(m, work, sandbox, float(rules.build_timeout_s))
                if rules.check:
                    logs = staging / "logs"
                    logs.mkdir()
                    trio.run(_check, copy, m, sandbox, logs, say, [family(ladder.variant)] if ladder else None)
            chown_tree(work, os.getuid(), os.getgid())  # built under a sandbox uid: back to ours
            if store is None:
                return Submitted(key, "checked", None, [])
            final = ladder.agents_dir / m.name / f"{m.version}-{digest[:12]}"
            final.parent.mkdir(parents=True, exist_ok=True)
            private(final.parent)
            if final.exists():
                shutil.rmtree(final)
            shutil.move(str(work), final)
            _read_only(final)
            retired = store.add_entry(
                {
                    "key": key,
                    "name": m.name,
                    "version": m.version,
                    "language": m.language,
                    "content_hash": digest,
                    "folder": str(final),
                }  # fmt: skip
            )
            return Submitted(key, "new", final, retired)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        if store is not None:
            store.close()
