"""The sandbox every agent process runs in: what it may see, use and reach.

For each process the referee starts, a `Sandbox`:

- copies the agent's folder to a fresh working directory (so it cannot change its
  submission, nor see another process's files), removed when the process is gone;
- gives it only whitelisted environment variables (plus its manifest's ``[env]``), with
  ``HOME`` and ``TMPDIR`` inside that directory;
- starts it through `arena.jail`, which sets resource limits (memory, CPU seconds,
  processes, file size, open files, no core files), puts it in a new network namespace
  with no interface up (no network, loopback included), and, when the referee runs as
  root, makes it an unprivileged user of its own: a uid no other process has, so it
  cannot read the store, the logs, the ladder's files or another agent's directory (all
  made private to the referee's user), and cannot signal anything but itself;
- after it stops, its process group is killed (`arena.process`), and with a uid of its
  own every process of that uid, so a child that left the group dies too.

`probe` finds out once which of these this machine allows; a mechanism that is missing
is reported once (``arena sandbox-info`` lists them) and the run goes on with the rest.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UserError
from .process import Launch

if TYPE_CHECKING:
    from .agents import Manifest

JAIL = Path(__file__).resolve().parent / "jail.py"
#: Environment variables an agent gets from the referee's environment, when set.
ENV_WHITELIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SYSTEMROOT")
#: The uids given to agents when the referee runs as root: one per process.
UID_BASE = 1_500_000_000
UID_SPAN = 1_000_000

ROOT_PREFIX = "arena-sandbox-"
#: Numbers the processes of all sandboxes of this referee: their uids never collide.
_COUNTER = itertools.count()
_MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of one agent process (setrlimit), each hard."""

    memory_mb: int = 1024  # RLIMIT_DATA: heap and anonymous mappings
    cpu_s: int = 3600  # RLIMIT_CPU over the process's life (the move clock is the real limit)
    processes: int = 64  # RLIMIT_NPROC: processes and threads (needs a uid of its own)
    file_mb: int = 64  # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 256  # RLIMIT_NOFILE

    FIELDS = ("memory_mb", "cpu_s", "processes", "file_mb", "open_files")

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str) -> Limits:
        """Limits from a config table; `UserError` names the field."""
        unknown = sorted(set(data) - {"enabled", *cls.FIELDS})
        if unknown:
            raise UserError(f"{where}: unknown field '{unknown[0]}' (known: enabled, {', '.join(cls.FIELDS)})")
        values = {}
        for key in cls.FIELDS:
            if key in data:
                v = data[key]
                if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                    raise UserError(f"{where}: field '{key}' must be a positive integer, got {v!r}")
                values[key] = v
        return cls(**values)

    def rlimits(self, own_uid: bool) -> dict[str, int]:
        out = {
            "DATA": self.memory_mb * _MIB,
            "CPU": self.cpu_s,
            "FSIZE": self.file_mb * _MIB,
            "NOFILE": self.open_files,
            "CORE": 0,
        }
        if own_uid:  # RLIMIT_NPROC counts every process of the uid: only meaningful for our own
            out["NPROC"] = self.processes
        return out


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What this machine lets the sandbox do (see `probe`)."""

    root: bool
    network: str | None  # "netns" (as root), "userns" (unprivileged) or None
    network_why: str
    own_uid: bool
    own_uid_why: str
    mask: tuple[tuple[str, tuple[str, ...]], ...] = ()  # folders hidden, with what is bound back
    hide_processes: bool = False  # a /proc of its own with hidepid=2

    def lines(self, limits: Limits) -> list[tuple[str, bool, str]]:
        """(mechanism, active, detail) for ``arena sandbox-info``."""
        r = limits.rlimits(self.own_uid)
        return [
            ("working directory", True, "a private copy of the agent's folder per process, removed after"),
            ("environment", True, f"only {', '.join(ENV_WHITELIST)}, the manifest's [env]; HOME, TMPDIR its own"),
            ("memory", True, f"RLIMIT_DATA {limits.memory_mb} MiB"),
            ("CPU time", True, f"RLIMIT_CPU {limits.cpu_s} s per process, replaced between matches at 80%"),
            ("file size", True, f"RLIMIT_FSIZE {limits.file_mb} MiB; {limits.open_files} open files; no core files"),
            (
                "processes",
                "NPROC" in r,
                f"RLIMIT_NPROC {limits.processes}" if "NPROC" in r else f"off: {self.own_uid_why}",
            ),
            (
                "network",
                self.network is not None,
                {
                    "netns": "a new network namespace, no interface up",
                    "userns": "a new user and network namespace, no interface up",
                }.get(self.network or "", f"off: {self.network_why}"),
            ),  # fmt: skip
            (
                "file isolation",
                self.own_uid,
                "a uid of its own per process; store, logs and ladder files private to the referee"
                + "".join(f"; {d} hidden but for {', '.join(k)}" for d, k in self.mask)
                if self.own_uid
                else f"off: {self.own_uid_why}; the agent can read what this user can",
            ),
            (
                "process isolation",
                self.hide_processes,
                "a /proc with hidepid=2: no other process visible (not the referee's command line)"
                if self.hide_processes
                else "off: other processes and their command lines are visible",
            ),
            ("no new privileges", True, "PR_SET_NO_NEW_PRIVS"),
            (
                "cleanup",
                True,
                "its process group killed" + (", and every process of its uid" if self.own_uid else ""),
            ),
        ]


def _world_reachable(path: Path) -> bool:
    """Whether a user with no rights of its own can reach and read ``path``."""
    path = path.resolve()
    for p in [*reversed(path.parents), path]:
        try:
            mode = p.stat().st_mode
        except OSError:
            return False
        need = stat.S_IXOTH if p != path or p.is_dir() else stat.S_IROTH
        if not mode & need:
            return False
    return True


def _masks() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For an agent with a uid of its own to run this Python and import arena, every
    folder on the way must be open to other users. A folder that is not (``/root``, where
    pyenv puts Python) is covered by an empty tmpfs in the agent's mount namespace, with
    just those trees bound back in."""
    need = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), JAIL.parent.parent}
    need.add(Path(sys.executable).resolve().parent)
    masks: dict[str, list[str]] = {}
    for path in sorted(need):
        closed = next((p for p in [*reversed(path.parents), path] if not _world_reachable(p)), None)
        if closed is not None and closed != path:
            masks.setdefault(str(closed), []).append(str(path))
    out = []
    for d, keep in sorted(masks.items()):
        paths = sorted(set(keep))
        outer = [k for k in paths if not any(k != o and Path(k).is_relative_to(o) for o in paths)]
        out.append((d, tuple(outer)))
    return tuple(out)


def jail_argv(spec: dict[str, Any], command: Sequence[str]) -> list[str]:
    """The command line that starts ``command`` through the launcher with ``spec``."""
    return [sys.executable, "-I", "-S", str(JAIL), json.dumps(spec), "--", *command]


def _run_probe(spec: dict[str, Any]) -> str | None:
    """Run the launcher with ``spec`` and no command; None if it worked, else why not."""
    try:
        r = subprocess.run(
            jail_argv({**spec, "probe": True}, ["true"]),
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1]


@cache
def probe() -> Capabilities:
    """Find out (once per process) which mechanisms this machine allows."""
    if not sys.platform.startswith("linux"):
        why = "not Linux"
        return Capabilities(False, None, why, False, why)
    root = os.geteuid() == 0
    if root:
        err = _run_probe({"net": True})
        network, network_why = ("netns", "") if err is None else (None, err)
        mask = _masks()
        spec = {"uid": UID_BASE, "gid": UID_BASE, "mask": [{"dir": d, "keep": list(k)} for d, k in mask]}
        err = _run_probe(spec)
        own, own_why = (True, "") if err is None else (False, err)
        if not own:
            mask = ()
        hide = own and _run_probe({**spec, "proc": True}) is None
    else:
        err = _run_probe({"net": True, "userns": True})
        network, network_why = ("userns", "") if err is None else (None, f"no user namespaces here ({err})")
        own, own_why = False, "the referee does not run as root"
        mask = ()
    return Capabilities(root, network, network_why, own, own_why, mask if root else (), hide if root else False)


@dataclasses.dataclass(frozen=True)
class Policy:
    """Whether to sandbox, with which limits."""

    enabled: bool = True
    limits: Limits = Limits()

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, where: str) -> Policy:
        data = data or {}
        enabled = data.get("enabled", True)
        if not isinstance(enabled, bool):
            raise UserError(f"{where}: field 'enabled' must be true or false, got {enabled!r}")
        return cls(enabled, Limits.from_dict(data, where))

    def to_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, **{k: getattr(self.limits, k) for k in Limits.FIELDS}}


def private(path: Path) -> None:
    """Make a file or folder the referee writes readable by its own user only."""
    try:
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
    except OSError:
        pass


class Sandbox:
    """The sandbox of one run: a private root folder for the processes' directories.

    Use as a context manager; `launch` is a context manager per process. With a
    disabled policy, processes run as before: in their folder, with the referee's
    environment, without limits."""

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        warn: Callable[[str], None] | None = None,
        hide: Sequence[Path] = (),
    ):
        self.policy = policy or Policy()
        #: Files no agent may read even if other users may (a tournament's config: its seed).
        self.hide = [str(Path(p).resolve()) for p in hide]
        self.caps = probe() if self.policy.enabled else None
        self.root: Path | None = None
        self._dirs = itertools.count()
        self._warn = warn if warn is not None else (lambda s: print(f"arena: {s}", file=sys.stderr))

    def __enter__(self) -> Sandbox:
        if self.policy.enabled:
            _remove_stale()
            self.root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-"))
            os.chmod(self.root, 0o711)  # each process may enter its own directory, not list the others
            missing = [f"{m} ({d.removeprefix('off: ')})" for m, ok, d in self.caps.lines(self.policy.limits) if not ok]
            if missing:
                self._warn(f"sandbox: going on without {'; '.join(missing)} (see arena sandbox-info)")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.root is not None:
            _remove(self.root)
            self.root = None

    def _uid(self, n: int) -> int:
        # distinct within a run, and across concurrent runs unless their pids collide mod 1000
        return UID_BASE + (os.getpid() * 1000 + n) % UID_SPAN

    def spec(self, uid: int | None) -> dict[str, Any]:
        """The launcher's spec for one process."""
        caps = self.caps
        assert caps is not None
        spec: dict[str, Any] = {"rlimits": self.policy.limits.rlimits(uid is not None)}
        if caps.network is not None:
            spec["net"] = True
            spec["userns"] = caps.network == "userns"
        if uid is not None:
            spec["uid"] = spec["gid"] = uid
            if caps.mask:
                spec["mask"] = [{"dir": d, "keep": list(k)} for d, k in caps.mask]
            if caps.hide_processes:
                spec["proc"] = True
                if self.hide:
                    spec["hide"] = self.hide
        return spec

    def environment(self, home: Path, extra: dict[str, str]) -> dict[str, str]:
        env = {k: os.environ[k] for k in ENV_WHITELIST if k in os.environ}
        env.setdefault("PATH", os.defpath)
        env.update(HOME=str(home), TMPDIR=str(home / ".tmp"), PYTHONDONTWRITEBYTECODE="1")
        env.update(extra)
        return env

    @contextmanager
    def launch(self, manifest: Manifest, extra_env: dict[str, str] | None = None) -> Iterator[Launch]:
        """How to start one process of ``manifest`` in the sandbox; its working
        directory is removed on the way out."""
        base = manifest.launch(extra_env)
        if not self.policy.enabled:
            yield base
            return
        if self.root is None:
            raise RuntimeError("Sandbox.launch outside 'with Sandbox()'")
        n = next(self._dirs)  # the folder's number in this sandbox; the uid's is global
        uid = self._uid(next(_COUNTER)) if self.caps.own_uid else None
        work = self.root / f"{n}-{base.name}"
        shutil.copytree(base.cwd, work, symlinks=True)
        (work / ".tmp").mkdir(exist_ok=True)
        if uid is not None:
            chown_tree(work, uid, uid)
        os.chmod(work, 0o700)
        env = self.environment(work, {**dict(manifest.env), **(extra_env or {})})
        command = jail_argv(self.spec(uid), base.command)
        try:
            yield Launch(command=command, cwd=work, env=env, name=base.name, uid=uid)
        finally:
            _remove(work)

    def wrap_build(self, command: list[str], folder: Path) -> tuple[list[str], dict[str, str]]:
        """A build command run in ``folder`` under the same limits and isolation (the
        folder is handed to the build's uid, which is then kept)."""
        if not self.policy.enabled:
            return command, dict(os.environ)
        uid = self._uid(next(_COUNTER)) if self.caps.own_uid else None
        if uid is not None:
            chown_tree(folder, uid, uid)
        env = self.environment(folder, {})
        env["TMPDIR"] = str(folder)
        return jail_argv(self.spec(uid), command), env


def _remove_stale() -> None:
    """Remove the sandbox folders of referees that died without cleaning up (SIGKILL)."""
    for p in Path(tempfile.gettempdir()).glob(f"{ROOT_PREFIX}*-*"):
        pid = p.name.removeprefix(ROOT_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and p.stat().st_uid == os.geteuid():
            _remove(p)


def chown_tree(folder: Path, uid: int, gid: int) -> None:
    """Give a folder and everything in it (links themselves, not their targets) to uid:gid."""
    os.chown(folder, uid, gid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def _remove(path: Path) -> None:
    """Remove a folder an agent may have made hard to remove (read-only folders)."""

    def fix(func: Any, p: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=fix)
