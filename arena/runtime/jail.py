"""The sandbox's launcher: applies limits and isolation to itself, then becomes the agent.

Run as ``python -I -S jail.py SPEC -- COMMAND...`` (standard library only, no site, and
only modules that load fast: it runs once or twice per agent process). ``SPEC`` is a dict
made by `arena.runtime.sandbox`, in `marshal`'s format as hex (the same Python writes and reads it;
``json`` would cost 15 ms to import):

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

With ``init`` the launcher is instead the first process of a bubblewrap sandbox (pid 1
of its PID namespace, see `arena.runtime.sandbox`). It copies ``copy[0]`` (the agent's folder,
mounted read-only) to ``copy[1]`` (a size-capped tmpfs) and works there, forks the agent
(which sets ``rlimits`` and execs the command), and stays as the namespace's init:

- it reaps orphans, and exits with the agent's status (128 + N for a signal N), which
  takes every other process of the namespace with it (the kernel kills them);
- it exits at once when its standard input reports a hang-up: every writer of the
  agent's input is gone, that is the referee has stopped the agent or died, SIGKILL
  included. Trio spawns processes from worker threads, so ``PR_SET_PDEATHSIG`` towards
  the referee (bubblewrap's ``--die-with-parent``) would fire when a thread idles out;
  the pipe is the one link that lasts exactly as long as the referee holds it;
- it dies with the sandbox's outer process (``PR_SET_PDEATHSIG`` towards it, a single
  thread), so the referee stops the whole sandbox by killing the process it started;
- it is not dumpable, so the agent (same uid) cannot ptrace it or read its memory.
"""

import _signal as signal  # not signal: its enums cost 9 ms of start-up per agent process
import ctypes
import errno
import marshal
import os
import resource
import select
import stat
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x2, 0x4, 0x8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG, PR_SET_DUMPABLE = 1, 4


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
    _set_rlimits(spec)
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


def _set_rlimits(spec: dict) -> None:
    for name, value in spec.get("rlimits", {}).items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))


def _restore_signals() -> None:
    # Python ignores these; an ignored signal stays ignored across exec, so restore
    # the defaults (a write past RLIMIT_FSIZE must kill the agent, as in any process).
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def _copy_tree(src: str, dst: str) -> None:
    """Copy a folder's files, folders and symlinks, keeping their permission bits."""
    for entry in os.scandir(src):
        s, d = entry.path, os.path.join(dst, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(s), d)
        elif entry.is_dir():
            os.mkdir(d, 0o700)
            _copy_tree(s, d)
            os.chmod(d, stat.S_IMODE(entry.stat().st_mode) | 0o700)
        elif entry.is_file():
            with open(s, "rb") as fi, open(d, "wb") as fo:
                while chunk := fi.read(1 << 20):
                    fo.write(chunk)
            os.chmod(d, stat.S_IMODE(entry.stat().st_mode) | 0o600)


def _exit_status(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code  # killed by signal N: 128 + N, as a shell says


def supervise(spec: dict, command: list) -> int:
    """Be the init of a sandbox: copy the folder in, start the agent, watch (see above)."""
    libc = _libc()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    os.closerange(3, 1 << 16)  # only the agent's three pipes get through, whatever was passed in
    try:
        if spec.get("copy"):
            _copy_tree(*spec["copy"])
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            print(f"sandbox: the agent's folder does not fit in its working space ({e})", file=sys.stderr)
        elif e.errno == errno.EACCES:
            print(f"sandbox: cannot copy the agent's folder: {e} (as root, its files must be readable by other "
                  "users: chmod -R a+rX)", file=sys.stderr)  # fmt: skip
        else:
            print(f"sandbox: cannot copy the agent's folder: {e}", file=sys.stderr)
        return 126
    os.chdir(spec["cwd"])
    watch = os.dup(0)  # the referee's end of the agent's input: a hang-up means it is gone
    pid = os.fork()
    if pid == 0:
        try:
            os.close(watch)
            _set_rlimits(spec)  # no_new_privs: bubblewrap has set it already
            os.umask(spec.get("umask", 0o077))
            _restore_signals()
            os.environ.pop("PWD", None)  # bubblewrap's, for the folder it started in
            os.execvp(command[0], command)
        except BaseException as e:  # noqa: BLE001 - one line and status 126, never return
            try:
                print(f"sandbox: cannot start {command[0]!r}: {e}", file=sys.stderr, flush=True)
            finally:
                os._exit(126)
    # The init keeps none of the agent's pipes but the watched one: the referee sees the
    # end of the agent's output when the agent (and its children) are gone.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    status: list = []

    def reap(*_: object) -> None:
        while True:
            try:
                p, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if p == 0:
                return
            if p == pid:
                status.append(st)

    signal.signal(signal.SIGCHLD, reap)
    poller = select.poll()
    poller.register(watch, 0)  # hang-ups and errors only: the agent's input is never read here
    try:
        poller.register(os.pidfd_open(pid), select.POLLIN)  # readable once the agent has exited
        tick = None
    except (AttributeError, OSError):
        tick = 50  # no pidfd: look every 50 ms
    reap()
    while not status:
        for fd, event in poller.poll(tick):
            if fd == watch and event & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                os._exit(128 + signal.SIGHUP)  # as if hung up: the namespace dies with us
        reap()
    os._exit(_exit_status(status[0]))  # at once: an interpreter's shutdown would delay the referee


def main(argv: list) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("jail: usage: jail.py SPEC -- COMMAND...", file=sys.stderr)
        return 126
    try:
        spec = marshal.loads(bytes.fromhex(argv[0]))
        if spec.get("init"):
            return supervise(spec, argv[2:])
        apply(spec)
        if spec.get("probe"):
            return 0
        _restore_signals()
        os.execvp(argv[2], argv[2:])
    except Exception as e:  # noqa: BLE001 - any failure is one line and status 126
        print(f"sandbox: cannot start {argv[2]!r}: {e}", file=sys.stderr)
        return 126
    return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
