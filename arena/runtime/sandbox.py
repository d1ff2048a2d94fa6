"""The sandbox every agent process runs in: what it may see, use and reach.

Where bubblewrap is installed and the kernel lets this user make namespaces (current
Linux does, for root and for normal users alike), each agent process runs in a sandbox
of its own (`bwrap`), the same for a root and a normal referee:

- user, PID, mount, network, IPC and UTS namespaces: it sees and can signal only its
  own processes (not the referee, not the other agents, not ``kill(-1)`` beyond its own),
  has no network (loopback only), and sees a file tree made of read-only runtime paths
  (``/usr``, a few files of ``/etc``, this Python, the arena package, the commands it
  runs) and nothing else of the machine: not the store, the logs, the configs, the
  user's files nor another agent's;
- a private copy of its folder in a size-capped tmpfs (its working directory and HOME),
  and private, size-capped ``/tmp`` and ``/dev/shm``; the root and ``/dev`` are read-only;
- resource limits (memory, CPU seconds, processes counted in its own user namespace,
  file size, open files, no core files), no new privileges, a session of its own;
- as root, also a uid of its own (`allocate_uid`: unique on the machine while it runs);
- its whole namespace dies with it: `arena.runtime.jail`'s init (pid 1 inside) exits when the
  agent exits, when the referee stops it, and when the referee's end of the agent's
  input closes, which includes the referee being SIGKILLed. Nothing outlives it, on disk
  or in the process table.

Without bubblewrap or user namespaces the older, weaker mechanisms are used (a copy of
the folder under the system's temp dir, whitelisted environment, limits, a network
namespace, and as root a uid of its own with a hidden /proc); every run says in one line
what is missing, and ladders refuse untrusted code on such a machine unless told not to.

`probe` finds out once which of these this machine allows (``arena sandbox-info``).
bubblewrap is looked up on PATH, or is the program ``$ARENA_BWRAP`` names.
"""

from __future__ import annotations

import dataclasses
import fcntl
import itertools
import marshal
import os
import secrets
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

from ..errors import UserError
from .process import Launch

if TYPE_CHECKING:
    from .agents import Manifest

JAIL = Path(__file__).resolve().parent / "jail.py"
#: Environment variables an agent gets from the referee's environment, when set.
ENV_WHITELIST = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SYSTEMROOT")
#: The uids given to agents when the referee runs as root: one per process, drawn at
#: random from this range and held (a lock file) while the process lives.
UID_BASE = 1_500_000_000
UID_SPAN = 500_000_000
#: Inside a bubblewrap sandbox: the agent's working copy (also HOME), its read-only source.
SANDBOX_HOME = "/home/agent"
SANDBOX_SRC = "/run/agent-src"
#: The files of /etc an agent may read (the dynamic loader's, time zones, certificates).
ETC_FILES = (
    "alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "os-release",
    "ssl", "ca-certificates", "mime.types",
)  # fmt: skip

ROOT_PREFIX = "arena-sandbox-"
_MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of one agent process (setrlimit), each hard."""

    memory_mb: int = 1024  # RLIMIT_DATA: heap and anonymous mappings
    cpu_s: int = 3600  # RLIMIT_CPU over the process's life (the move clock is the real limit)
    processes: int = 64  # RLIMIT_NPROC: processes and threads (needs a uid of its own)
    file_mb: int = 64  # RLIMIT_FSIZE: the largest file it may write
    open_files: int = 256  # RLIMIT_NOFILE
    disk_mb: int = 256  # its working copy (a tmpfs of this size), with bubblewrap
    tmp_mb: int = 64  # its /tmp (a tmpfs), with bubblewrap
    shm_mb: int = 64  # its /dev/shm (a tmpfs), with bubblewrap

    FIELDS = ("memory_mb", "cpu_s", "processes", "file_mb", "open_files", "disk_mb", "tmp_mb", "shm_mb")

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
    network: str | None  # "netns" (as root), "userns" (unprivileged) or None; fallback mode
    network_why: str
    own_uid: bool
    own_uid_why: str
    mask: tuple[tuple[str, tuple[str, ...]], ...] = ()  # folders hidden, with what is bound back
    hide_processes: bool = False  # a /proc of its own with hidepid=2
    #: bubblewrap's path when a sandbox of namespaces works here (user, PID, mount,
    #: network, IPC, UTS), else None and why not.
    bwrap: str | None = None
    bwrap_why: str = ""
    bwrap_flags: tuple[str, ...] = ()  # extra flags this bubblewrap and kernel accept

    @property
    def isolated(self) -> bool:
        """Whether agents are fully isolated: namespaces for every process."""
        return self.bwrap is not None

    def lines(self, limits: Limits) -> list[tuple[str, bool, str]]:
        """(mechanism, active, detail) for ``arena sandbox-info``."""
        if self.isolated:
            return self._isolated_lines(limits)
        r = limits.rlimits(self.own_uid)
        why = f"off: {self.bwrap_why}"
        return [
            ("namespaces", False, why),
            ("working directory", True, "a private copy of the agent's folder per process, removed after"),
            ("environment", True, f"only {', '.join(ENV_WHITELIST)}, the manifest's [env]; HOME, TMPDIR its own"),
            ("memory", True, f"RLIMIT_DATA {limits.memory_mb} MiB"),
            ("CPU time", True, f"RLIMIT_CPU {limits.cpu_s} s per process, replaced between matches at 80%"),
            ("file size", True, f"RLIMIT_FSIZE {limits.file_mb} MiB; {limits.open_files} open files; no core files"),
            ("disk space", False, "off: its folder and /tmp are on the machine's disk, /dev/shm is shared"),
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
            (
                "signals",
                self.own_uid,
                "a uid of its own: it can signal only its own processes"
                if self.own_uid
                else "off: it can signal the referee, the other agents and every process of this user",
            ),
            ("no new privileges", True, "PR_SET_NO_NEW_PRIVS"),
            (
                "cleanup",
                self.own_uid,
                "its process group killed, and every process of its uid"
                if self.own_uid
                else "off: its process group is killed, but a child that leaves the group can outlive it",
            ),
        ]

    def _isolated_lines(self, limits: Limits) -> list[tuple[str, bool, str]]:
        uid = "a uid of its own per process (root referee)" if self.root else "this user's uid, no privileges"
        return [
            ("namespaces", True, f"bubblewrap ({self.bwrap}): user, PID, mount, network, IPC, UTS; {uid}"),
            ("working directory", True, f"a private copy of its folder in a tmpfs of {limits.disk_mb} MiB, gone after"),
            ("environment", True, f"only {', '.join(ENV_WHITELIST)}, the manifest's [env]; HOME, TMPDIR its own"),
            ("memory", True, f"RLIMIT_DATA {limits.memory_mb} MiB"),
            ("CPU time", True, f"RLIMIT_CPU {limits.cpu_s} s per process, replaced between matches at 80%"),
            ("file size", True, f"RLIMIT_FSIZE {limits.file_mb} MiB; {limits.open_files} open files; no core files"),
            ("disk space", True, f"private /tmp of {limits.tmp_mb} MiB, /dev/shm of {limits.shm_mb} MiB; / read-only"),
            ("processes", True, f"RLIMIT_NPROC {limits.processes}, counted in its own user namespace"),
            ("network", True, "a network namespace of its own: loopback only, nothing outside"),
            ("file isolation", True, "a mount namespace: its copy and read-only runtime paths, nothing else"),
            ("process isolation", True, "a PID namespace: it sees only its own processes (no command lines of others)"),
            ("signals", True, "it can signal only its own processes: not the referee, not other agents"),
            (
                "no new privileges",
                True,
                "PR_SET_NO_NEW_PRIVS, a session of its own, no nested namespaces"
                if "--disable-userns" in self.bwrap_flags
                else "PR_SET_NO_NEW_PRIVS, a session of its own",
            ),
            ("cleanup", True, "the namespace dies with its match, with the runner, and with a SIGKILL of the runner"),
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


def _runtime() -> list[Path]:
    """The trees an agent needs to run this Python and import arena."""
    need = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), JAIL.parent.parent}  # the arena package
    need.add(Path(sys.executable).resolve().parent)
    return sorted(need)


def _masks(paths: Sequence[Path] | None = None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For an agent with a uid of its own to reach ``paths`` (default: `_runtime`), every
    folder on the way must be open to other users. A folder that is not (``/root``, where
    pyenv puts Python; a private ladder folder) is covered by an empty tmpfs in the
    agent's mount namespace, with just those trees bound back in."""
    masks: dict[str, list[str]] = {}
    for path in sorted(set(_runtime() if paths is None else paths)):
        closed = next((p for p in [*reversed(path.parents), path] if not _world_reachable(p)), None)
        if closed is not None and closed != path:
            masks.setdefault(str(closed), []).append(str(path))
    out = []
    for d, keep in sorted(masks.items()):
        kept = sorted(set(keep))
        outer = [k for k in kept if not any(k != o and Path(k).is_relative_to(o) for o in kept)]
        out.append((d, tuple(outer)))
    return tuple(out)


def jail_argv(spec: dict[str, Any], command: Sequence[str]) -> list[str]:
    """The command line that starts ``command`` through the launcher with ``spec`` (in
    marshal's format, which the launcher reads without importing anything)."""
    return [sys.executable, "-I", "-S", str(JAIL), marshal.dumps(spec).hex(), "--", *command]


def _binds(command: Sequence[str], path: str) -> list[str]:
    """The host paths to mount read-only for ``command``: the runtime, and the install
    prefix of its program when that lies outside (``/opt/node/bin/node`` → ``/opt/node``)."""
    out = [str(p) for p in _runtime()]
    exe = shutil.which(command[0], path=path) if command and "/" not in command[0] else None
    if exe:
        real = Path(exe).resolve()
        if not any(real.is_relative_to(p) for p in ("/usr", "/bin", "/lib", "/sbin", *out)):
            out.append(str(real.parent.parent if real.parent.name == "bin" else real.parent))
    keep = []
    for p in sorted(set(out)):
        if not any(p != q and Path(p).is_relative_to(q) for q in out) and not Path(p).is_relative_to("/usr"):
            keep.append(p)
    return keep


def bwrap_argv(
    bwrap: str,
    flags: Sequence[str],
    limits: Limits,
    source: Path,
    command: Sequence[str],
    path: str,
    *,
    build: bool = False,
) -> list[str]:
    """The bubblewrap command line that runs ``command`` in a sandbox of its own with a
    copy of ``source`` as its working directory (see the module docstring); with
    ``build``, ``source`` itself, writable."""
    a = [bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
         "--unshare-cgroup-try", *flags, "--as-pid-1", "--new-session", "--hostname", "arena",
         "--ro-bind", "/usr", "/usr"]  # fmt: skip
    for d in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            a += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            a += ["--ro-bind", d, d]
    # the tmpfs go first, the runtime binds after: an interpreter or checkout under /tmp
    # (a CI clone, say) is then bound on top of the private /tmp, not hidden by it
    mib = 1 << 20
    a += ["--proc", "/proc", "--dev", "/dev",
          "--size", str(limits.shm_mb * mib), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
          "--size", str(limits.tmp_mb * mib), "--tmpfs", "/tmp",
          "--chdir", "/"]  # fmt: skip
    for name in ETC_FILES:
        a += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for p in _binds(command, path):
        a += ["--ro-bind", p, p]
    spec: dict[str, Any] = {"init": True, "rlimits": limits.rlimits(True), "cwd": SANDBOX_HOME}
    if build:  # a build writes its outputs into the folder itself, readable by the agents' uids
        a += ["--bind", str(source), SANDBOX_HOME]
        spec["umask"] = 0o022
    else:
        a += ["--size", str(limits.disk_mb * mib), "--perms", "0700", "--tmpfs", SANDBOX_HOME,
              "--ro-bind", str(source), SANDBOX_SRC]  # fmt: skip
        spec["copy"] = [SANDBOX_SRC, SANDBOX_HOME]
    return [*a, "--remount-ro", "/", "--", *jail_argv(spec, command)]


def _run_probe(spec: dict[str, Any]) -> str | None:
    """Run the launcher with ``spec`` and no command; None if it worked, else why not."""
    try:
        r = subprocess.run(
            jail_argv({**spec, "probe": True}, ["true"]),
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1]


def _probe_bwrap(root: bool) -> tuple[str | None, str, tuple[str, ...]]:
    """Whether a bubblewrap sandbox works here: (path or None, why not, extra flags)."""
    bwrap = shutil.which(os.environ.get("ARENA_BWRAP") or "bwrap")
    if bwrap is None:
        where = f"ARENA_BWRAP={os.environ['ARENA_BWRAP']} is not a program" if os.environ.get("ARENA_BWRAP") else (
            "bubblewrap is not installed (Debian, Ubuntu: apt-get install bubblewrap)")  # fmt: skip
        return None, where, ()
    with tempfile.TemporaryDirectory(prefix="arena-probe-") as d:
        os.chmod(d, 0o755)
        Path(d, "probe").write_text("ok\n")
        os.chmod(Path(d, "probe"), 0o644)
        err = "?"
        for flags in (("--disable-userns",), ()):
            argv = bwrap_argv(bwrap, flags, Limits(), Path(d), ["cat", "probe"], os.environ.get("PATH", os.defpath))
            if root:
                argv = jail_argv({"mask": _mask_spec(_masks([*_runtime(), Path(d)])), "uid": UID_BASE,
                                  "gid": UID_BASE}, argv)  # fmt: skip
            try:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.SubprocessError) as e:
                return None, str(e), ()
            if r.returncode == 0 and r.stdout == "ok\n":
                return bwrap, "", flags
            err = (r.stderr.strip().splitlines() or [f"status {r.returncode}"])[-1]
    return None, f"bubblewrap cannot make namespaces here ({err})", ()


def _mask_spec(masks: tuple[tuple[str, tuple[str, ...]], ...]) -> list[dict[str, Any]]:
    return [{"dir": d, "keep": list(k)} for d, k in masks]


@cache
def probe() -> Capabilities:
    """Find out (once per process) which mechanisms this machine allows."""
    if not sys.platform.startswith("linux"):
        why = "not Linux"
        return Capabilities(False, None, why, False, why, bwrap_why=why)
    root = os.geteuid() == 0
    bwrap, bwrap_why, flags = _probe_bwrap(root)
    if root:
        err = _run_probe({"net": True})
        network, network_why = ("netns", "") if err is None else (None, err)
        mask = _masks()
        spec = {"uid": UID_BASE, "gid": UID_BASE, "mask": _mask_spec(mask)}
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
    return Capabilities(root, network, network_why, own, own_why, mask if root else (), hide if root else False,
                        bwrap, bwrap_why, flags)  # fmt: skip


def allocate_uid() -> tuple[int, int]:
    """A uid no other live agent on this machine has (a root referee's), and the fd of
    the lock that holds it: close the fd when the process is gone. Uids are drawn at
    random and claimed with an exclusive ``flock`` on a file named after them, so two
    referees never hand out the same one, and a killed referee's claims lapse with it."""
    folder = Path("/run/arena-uids") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir(), ".arena-uids")
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise UserError(f"{folder}: must be a folder of this user's only (mode 0700), for the sandbox's uid locks")
    while True:
        uid = UID_BASE + secrets.randbelow(UID_SPAN)
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return uid, fd


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


def require_isolation(policy: Policy, unsafe: bool, what: str) -> None:
    """Refuse to run submitted (untrusted) code without the full sandbox, unless the
    organiser said so (``--unsafe-sandbox``); `UserError` names what is missing."""
    if unsafe:
        return
    if not policy.enabled:
        why = "the sandbox is disabled ([sandbox] enabled = false or --no-sandbox)"
    elif not probe().isolated:
        why = f"agents cannot be isolated here: {probe().bwrap_why}"
    else:
        return
    raise UserError(f"{what} runs submitted code, but {why}; pass --unsafe-sandbox to run it anyway")


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
        self._locks: list[int] = []  # uid locks held until the sandbox closes (builds)
        self._warn = warn if warn is not None else (lambda s: print(f"arena: {s}", file=sys.stderr))

    def __enter__(self) -> Sandbox:
        if self.policy.enabled:
            _remove_stale()
            if not self.caps.isolated:  # the working copies live on the host's disk
                self.root, lock = _make_root()
                self._locks.append(lock)  # the root is live while this lock is held
                os.chmod(self.root, 0o711)  # each process may enter its own directory, not list the others
            missing = [f"{m} ({d.removeprefix('off: ')})" for m, ok, d in self.caps.lines(self.policy.limits) if not ok]
            if missing:
                self._warn(f"sandbox: going on without {'; '.join(missing)} (see arena sandbox-info)")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.root is not None:
            _remove(self.root)
            self.root = None
        while self._locks:
            os.close(self._locks.pop())

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

    def environment(self, home: Path, extra: dict[str, str], tmp: Path | None = None) -> dict[str, str]:
        env = {k: os.environ[k] for k in ENV_WHITELIST if k in os.environ}
        env.setdefault("PATH", os.defpath)
        env.update(HOME=str(home), TMPDIR=str(tmp or home / ".tmp"), PYTHONDONTWRITEBYTECODE="1")
        env.update(extra)
        return env

    def _isolated(self, base: Launch, env: dict[str, str]) -> Iterator[Launch]:
        """The launch of ``base`` in bubblewrap. As root, bubblewrap runs as a uid of its
        own (`allocate_uid`), started as that uid directly; or, when some path it must
        bind is in a folder that uid cannot enter (pyenv's Python in ``/root``, a private
        ladder folder), through the launcher, which first covers that folder in a mount
        namespace of its own with just those paths bound back, then becomes the uid."""
        caps = self.caps
        assert caps is not None and caps.bwrap is not None
        source = Path(base.cwd).resolve()
        argv = bwrap_argv(caps.bwrap, caps.bwrap_flags, self.policy.limits, source, base.command, env["PATH"])
        if not caps.root:
            yield Launch(command=argv, cwd=Path("/"), env=env, name=base.name, nested=True)
            return
        uid, lock = allocate_uid()
        try:
            masks = _masks([*map(Path, _binds(base.command, env["PATH"])), source])
            if masks:
                argv, user = jail_argv({"mask": _mask_spec(masks), "uid": uid, "gid": uid}, argv), None
            else:
                user = uid
            yield Launch(command=argv, cwd=Path("/"), env=env, name=base.name, uid=uid, nested=True, user=user)
        finally:
            os.close(lock)

    @contextmanager
    def launch(self, manifest: Manifest, extra_env: dict[str, str] | None = None) -> Iterator[Launch]:
        """How to start one process of ``manifest`` in the sandbox; its working
        directory is removed on the way out."""
        base = manifest.launch(extra_env)
        if not self.policy.enabled:
            yield base
            return
        extra = {**dict(manifest.env), **(extra_env or {})}
        if self.caps.isolated:
            yield from self._isolated(base, self.environment(Path(SANDBOX_HOME), extra, Path("/tmp")))
            return
        if self.root is None:
            raise RuntimeError("Sandbox.launch outside 'with Sandbox()'")
        n = next(self._dirs)  # the folder's number in this sandbox
        uid, lock = allocate_uid() if self.caps.own_uid else (None, None)
        work = self.root / f"{n}-{base.name}"
        shutil.copytree(base.cwd, work, symlinks=True)
        (work / ".tmp").mkdir(exist_ok=True)
        if uid is not None:
            chown_tree(work, uid, uid)
        os.chmod(work, 0o700)
        env = self.environment(work, extra)
        command = jail_argv(self.spec(uid), base.command)
        try:
            yield Launch(command=command, cwd=work, env=env, name=base.name, uid=uid)
        finally:
            _remove(work)
            if lock is not None:
                os.close(lock)

    def wrap_build(self, command: list[str], folder: Path) -> tuple[list[str], dict[str, str]]:
        """A build command run in ``folder`` under the same limits and isolation (the
        folder is handed to the build's uid, which is then kept)."""
        if not self.policy.enabled:
            return command, dict(os.environ)
        if self.caps.isolated:  # (a build is run rarely: the launcher takes the uid and masks the paths)
            caps = self.caps
            env = self.environment(Path(SANDBOX_HOME), {}, Path("/tmp"))
            argv = bwrap_argv(caps.bwrap, caps.bwrap_flags, self.policy.limits, folder.resolve(), command,
                              env["PATH"], build=True)  # fmt: skip
            if caps.root:
                uid, lock = allocate_uid()
                self._locks.append(lock)  # a build's uid is not reused while the sandbox is open
                chown_tree(folder, uid, uid)
                masks = _masks([*map(Path, _binds(command, env["PATH"])), folder.resolve()])
                argv = jail_argv({"mask": _mask_spec(masks), "uid": uid, "gid": uid}, argv)
            return argv, env
        uid, lock = allocate_uid() if self.caps.own_uid else (None, None)
        if uid is not None:
            self._locks.append(lock)
            chown_tree(folder, uid, uid)
        env = self.environment(folder, {})
        env["TMPDIR"] = str(folder)
        return jail_argv(self.spec(uid), command), env


def _make_root() -> tuple[Path, int]:
    """A new root folder for a run's working copies, and the fd of the ``flock`` that
    marks it live (held until the run closes it, or dies: see `_remove_stale`)."""
    while True:
        root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-"))
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # a sweeper in another PID namespace may have taken it before the lock: start again
            if os.path.samestat(os.fstat(fd), os.lstat(root)):
                return root, fd
        except FileNotFoundError:
            pass
        os.close(fd)


def _remove_stale() -> None:
    """Remove the sandbox folders of referees that died without cleaning up (SIGKILL).

    A folder is live while the ``flock`` its run took on it is held; the kernel drops the
    lock when the run dies, however it dies. The pid in its name is not enough: a run in
    another PID namespace (a container sharing /tmp, ``unshare``, bubblewrap) has no such
    pid here, and taking it for dead removed a live run's agents' folders under them.
    Another sweeper removing the same folder at the same time is no error."""
    for p in Path(tempfile.gettempdir()).glob(f"{ROOT_PREFIX}*-*"):
        pid = p.name.removeprefix(ROOT_PREFIX).split("-", 1)[0]
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        try:
            if p.lstat().st_uid != os.geteuid() or not stat.S_ISDIR(p.lstat().st_mode):
                continue
            fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # gone meanwhile, or not ours to open
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # its run is alive (in another PID namespace)
        try:
            _remove(p)  # holding the lock: a new run that drew this name waits, then sees it gone
        finally:
            os.close(fd)


def chown_tree(folder: Path, uid: int, gid: int) -> None:
    """Give a folder and everything in it (links themselves, not their targets) to uid:gid."""
    os.chown(folder, uid, gid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def _remove(path: Path) -> None:
    """Remove a folder an agent may have made hard to remove (read-only or unreadable
    folders). Only real folders of the tree itself are ever chmodded: never its parent,
    never a symlink's target. A folder already gone counts as removed."""
    root = os.path.abspath(path)
    failed = False

    def note(_func: Any, _p: str, exc_info: Any) -> None:
        nonlocal failed
        failed = failed or not isinstance(exc_info[1], FileNotFoundError)

    def unlock(top: str) -> None:
        """Make ``top`` and every folder below it ours to empty (u+rwx), top down, by
        lstat: a symlink is never followed. A loop, not recursion: trees may be deep."""
        todo = [top]
        while todo:
            d = todo.pop()
            try:
                if not stat.S_ISDIR(os.lstat(d).st_mode):
                    continue
                os.chmod(d, 0o700)
                with os.scandir(d) as entries:
                    todo.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
            except OSError:
                continue

    shutil.rmtree(root, onerror=note)
    if failed and os.path.lexists(root):
        unlock(root)
        shutil.rmtree(root, ignore_errors=True)
