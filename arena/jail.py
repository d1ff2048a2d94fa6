"""The sandbox's launcher: applies limits and isolation to itself, then becomes the agent.

Run as ``python -I -S jail.py SPEC -- COMMAND...`` (standard library only, no site, so
it starts in a few milliseconds). ``SPEC`` is a JSON object made by `arena.sandbox`:

- ``rlimits``: ``{"DATA": bytes, "CPU": seconds, "NPROC": n, "FSIZE": bytes, ...}``,
  set as both soft and hard limit, so the agent cannot raise them again;
- ``net``: true for a new, empty network namespace (no interface is up, not even
  loopback, so every connection fails); ``userns`` true to make it inside a new user
  namespace (how an unprivileged referee gets one);
- ``mask``: folders to cover with an empty tmpfs in a new mount namespace, each with
  the paths under it to bind back in (``{"dir": "/root", "keep": [".../python"]}``):
  how a root referee whose Python lives in ``/root`` lets an agent run it without
  letting it see the rest of ``/root``;
- ``hide``: files to cover with an empty one (``/dev/null``) in that mount namespace: a
  tournament's config, which holds its seed;
- ``proc``: true to mount a fresh ``/proc`` with ``hidepid=2`` in a new mount namespace,
  so that the agent sees no process but its own uid's (not the referee's command line,
  which may hold a seed, nor the other agents);
- ``uid``/``gid``: the unprivileged user and group to become (a root referee only).

Then ``no_new_privs`` is set (no setuid binary can give privileges back), the umask is
077, and the launcher execs the command: the agent keeps the launcher's process id, so
the referee's pid, process group and CPU counter are the agent's. Any failure exits with
status 126 and one line on stderr, which the referee shows as a handshake fault.
"""

import ctypes
import json
import os
import resource
import signal
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
PR_SET_NO_NEW_PRIVS = 38


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [x.encode() if x is not None else None for x in (source, target, fstype, data)]
    if _libc().mount(enc[0], enc[1], enc[2], flags, enc[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _mounts(masks: list, proc: bool, hide: list) -> None:
    """In a new mount namespace: cover each folder with an empty tmpfs, binding back the
    paths it must keep; cover each file in ``hide`` with /dev/null; mount a /proc that
    hides other users' processes."""
    _unshare(CLONE_NEWNS)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    if proc:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    for path in hide:
        if os.path.isfile(path):
            _mount("/dev/null", path, None, MS_BIND)
    for m in masks:
        kept = [(k, os.open(k, os.O_PATH)) for k in m["keep"]]
        _mount("tmpfs", m["dir"], "tmpfs", 0, "mode=755,size=1m")
        for path, fd in kept:
            os.makedirs(path, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            os.close(fd)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def apply(spec: dict) -> None:
    """Apply ``spec`` to this process (see the module docstring)."""
    for name, value in spec.get("rlimits", {}).items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    if spec.get("net"):
        if spec.get("userns"):
            uid, gid = os.getuid(), os.getgid()
            _unshare(CLONE_NEWUSER | CLONE_NEWNET)
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"{uid} {uid} 1")
            _write("/proc/self/gid_map", f"{gid} {gid} 1")
        else:
            _unshare(CLONE_NEWNET)
    if spec.get("mask") or spec.get("proc") or spec.get("hide"):
        _mounts(spec.get("mask", []), bool(spec.get("proc")), spec.get("hide", []))
    if spec.get("uid") is not None:
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    os.umask(0o077)


def main(argv: list) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("jail: usage: jail.py SPEC -- COMMAND...", file=sys.stderr)
        return 126
    try:
        spec = json.loads(argv[0])
        apply(spec)
        if spec.get("probe"):
            return 0
        # Python ignores these; an ignored signal stays ignored across exec, so restore
        # the defaults (a write past RLIMIT_FSIZE must kill the agent, as in any process).
        for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.execvp(argv[2], argv[2:])
    except Exception as e:  # noqa: BLE001 - any failure is one line and status 126
        print(f"sandbox: cannot start {argv[2]!r}: {e}", file=sys.stderr)
        return 126
    return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
