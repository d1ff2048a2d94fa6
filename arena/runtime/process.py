"""Agent processes under Trio: spawn, handshake, request -> answer, and reap.

The only module that touches OS processes. `open_agent` starts an agent from its
manifest in its own process group, performs the handshake within a deadline and yields
an `AgentProcess`; leaving the ``async with`` always stops it (``quit``, then SIGTERM to
the group, then SIGKILL to the group) and reaps it, even on cancellation.

Faults are data, not crashes of the referee: the background tasks (stdout reader,
stderr drain, exit watcher) never raise; the first fault is stored on the process and
every waiting request fails with it as an `AgentFault` whose ``code`` is one of
`arena.protocol.codec.FAULTS`. The caller (the referee) turns that into a forfeit.

Timing. Each answer's wall latency is measured from the moment its request was written;
where Linux gives it (``/proc/<pid>/schedstat``) the CPU time the agent's main thread
used meanwhile is measured too. With ``clock = "cpu"`` the budget is charged in CPU time
instead, with a wall-clock backstop, because wall-clock timeouts are unfair on a loaded
host. CPU times are only attributed while one request is outstanding.

Deadlines. A process has one timer (`AgentProcess._watch_deadlines`), armed for the
earliest deadline of its outstanding requests, rather than a cancel scope per request;
the stdout reader wakes the task waiting for an answer directly (`_Pending.finish`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from ..protocol.codec import (
    MAX_AGENT_LINE,
    TABLE_VERSION,
    TWO_HANDED_GAMES,
    AgentProtocolError,
    Answer,
    Hello,
    LineSplitter,
    Ping,
    Pong,
    Quit,
    Ready,
    RefereeMessage,
    Request,
    decode_agent_line,
    encode,
)

#: How much of an agent's stderr is kept in its log file.
STDERR_CAP = 1 << 20
#: How much of the end of stderr is kept in memory for error messages.
STDERR_TAIL = 2048


class AgentFault(Exception):
    """An agent broke the rules of the protocol or died. ``code`` is in `FAULTS`."""

    def __init__(self, code: str, detail: str):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclasses.dataclass(frozen=True, slots=True)
class Launch:
    """How to start one agent process: the command, where, with which environment."""

    command: Sequence[str]
    cwd: Path
    env: dict[str, str] | None = None
    name: str = "agent"
    #: The uid the sandbox gave it, when it has one of its own: every process of that
    #: uid is killed when it stops, even those that left its process group (unless nested).
    uid: int | None = None
    #: Whether the command is a sandbox (bubblewrap) whose PID namespace holds the agent:
    #: the process started is the sandbox's outer process, its child the namespace's
    #: init, and the init's first child the agent. Killing the outer process kills all.
    nested: bool = False
    #: The uid (and gid) to start the command as: a root referee's sandbox uid.
    user: int | None = None


@dataclasses.dataclass(slots=True)
class _Pending:
    """One outstanding request or ping. Whoever ends it (the stdout reader with the
    answer, a fault, the deadline watcher) calls `finish`, which wakes the task parked on
    it directly: no event object, no cancel scope per request."""

    kind: type  # Answer for a decision request, Pong for a ping
    deadline: float  # trio time after which the deadline watcher ends it unanswered
    answer: Answer | Pong | None = None
    done: bool = False
    task: trio.lowlevel.Task | None = None  # the task parked on it, while it is

    def finish(self) -> None:
        self.done = True
        task, self.task = self.task, None
        if task is not None:
            trio.lowlevel.reschedule(task)


async def _park(slot: _Pending) -> None:
    """Wait until ``slot`` is finished, or the caller's scope is cancelled."""
    if slot.done:
        return
    slot.task = trio.lowlevel.current_task()

    def abort(_: object) -> trio.lowlevel.Abort:
        slot.task = None
        return trio.lowlevel.Abort.SUCCEEDED

    await trio.lowlevel.wait_task_rescheduled(abort)


def _children(pid: int) -> list[int]:
    """The live children of a process's main thread (Linux's /proc children list)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        return []


def _inner_pid(pid: int) -> int | None:
    """The process's pid in its own (innermost) PID namespace."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


def _sandbox_pids(outer: int) -> tuple[int | None, int | None]:
    """(init, agent) of a bubblewrap sandbox whose outer process is ``outer``: the init is
    its child (pid 1 inside), the agent the init's child that is pid 2 inside (the
    first it forked; orphans it adopted later have other pids)."""
    inits = _children(outer)
    if not inits:
        return None, None
    init = inits[0]
    agent = next((c for c in _children(init) if _inner_pid(c) == 2), None)
    return init, agent


def cpu_charged_s(pid: int) -> float | None:
    """CPU seconds process ``pid`` has been charged, as RLIMIT_CPU counts them: its
    ``CPUCLOCK_PROF`` clock (user + system time sampled at each timer tick), which is what
    the kernel compares with the limit before it sends SIGKILL. On a loaded host this runs
    well ahead of the time the process really ran (its ``schedstat`` runtime, which
    ``/proc/<pid>/stat`` is scaled to): a process killed at a 2 s limit had run 1.4 s.
    None where the clock cannot be read (not Linux, process gone)."""
    try:
        return time.clock_gettime((~pid << 3) | 0)  # the kernel's make_process_cpuclock(pid, CPUCLOCK_PROF)
    except (OSError, OverflowError):
        return None


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _open_cpu_counter(pid: int) -> int | None:
    """An fd on the process's CPU counter, or None where the OS has none (not Linux)."""
    try:
        return os.open(f"/proc/{pid}/schedstat", os.O_RDONLY)
    except OSError:
        return None


def _cpu_ns(fd: int | None) -> int | None:
    """CPU time of the process's main thread in ns (one pread of /proc/<pid>/schedstat)."""
    if fd is None:
        return None
    try:
        return int(os.pread(fd, 128, 0).split()[0])
    except (OSError, ValueError, IndexError):
        return None


class AgentProcess:
    """One running agent. Create with `open_agent`; use `request`, `notify`, `ping`."""

    def __init__(self, proc: trio.Process, launch: Launch, log_path: Path | None, stderr_cap: int):
        self.proc = proc
        self.launch = launch
        self.log_path = log_path
        self.ready: Ready | None = None
        self.fault: AgentFault | None = None
        self.stopping = False
        self.exit_code: int | None = None
        self._stderr_cap = stderr_cap
        self._stderr_tail = bytearray()
        self._stderr_bytes = 0
        self._pending: dict[int, _Pending] = {}
        #: The one deadline of the process: the earliest of its pending requests' (or
        #: later, when that one was answered), watched by `_watch_deadlines`.
        self._wake_at = math.inf
        self._watch: trio.CancelScope | None = None
        self._next_id = 1
        self._ready_event = trio.Event()
        self._send_lock = trio.StrictFIFOLock()
        self._slots: trio.Semaphore | None = None
        #: The agent's own process: the one started, or inside a sandbox, found after the
        #: handshake (see `_sandbox_pids`); and a sandbox's init, whose end is the end of all.
        self.agent_pid: int | None = None if launch.nested else proc.pid
        self._init_pid: int | None = None
        self._cpu_fd = None if launch.nested else _open_cpu_counter(proc.pid)
        self._cpu_mark: int | None = None  # the CPU counter after the last answer, if alone
        self._outbox: list[bytes] = []
        #: Every line sent and received, as ("to-agent" | "from-agent", bytes), when recording.
        self.transcript: list[tuple[str, bytes]] | None = None
        #: How the process ended: "exited" (before we asked), "quit", "sigterm" or "sigkill".
        self.stopped_by: str | None = None

    # -- public ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.ready.name if self.ready else self.launch.name

    @property
    def capacity(self) -> int:
        return self.ready.capacity if self.ready else 1

    @property
    def pid(self) -> int:
        return self.proc.pid

    def new_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    def cpu_total_s(self) -> float | None:
        """CPU seconds charged to the whole process so far (all threads) as the kernel
        counts them against RLIMIT_CPU, where Linux says (see `cpu_charged_s`)."""
        if self.agent_pid is None:
            return None
        charged = cpu_charged_s(self.agent_pid)
        if charged is not None:
            return charged
        try:
            with open(f"/proc/{self.agent_pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def stderr_tail(self) -> str:
        return self._stderr_tail.decode("utf-8", "replace")

    async def request(
        self, msg: Request, budget_s: float, *, cpu_clock: bool = False
    ) -> tuple[Answer, float, float | None]:
        """Send a decision request and wait for its answer.

        ``budget_s`` is the time the agent may use (time left plus grace). Returns the
        answer, the wall latency in seconds, and the agent's CPU seconds (None when not
        measurable). Raises `AgentFault` on a timeout or any fault of the process.
        """
        self._check()
        assert self._slots is not None, "request before the handshake"
        await _acquire(self._slots)
        try:
            self._check()
            data = encode(msg)  # before the clock starts: the agent is not charged for it
            alone = not self._pending
            # The agent's CPU counter as it stood when it sent its last answer: it has
            # been waiting for input since (lifecycle lines aside), so one read per
            # decision suffices. None while other requests overlap this one.
            cpu0 = (self._cpu_mark if self._cpu_mark is not None else _cpu_ns(self._cpu_fd)) if alone else None
            charge_cpu = cpu_clock and cpu0 is not None
            t0 = trio.current_time()
            # Charging CPU time, the wall clock is only a backstop for an agent that sleeps.
            slot = self._add(msg.id, Answer, t0 + (max(10 * budget_s, budget_s + 10.0) if charge_cpu else budget_s))
            try:
                if await self._send(data, slot.deadline):
                    if charge_cpu:
                        await self._wait_cpu(slot, budget_s, cpu0)
                    else:
                        await _park(slot)
                latency = trio.current_time() - t0
                cpu1 = self._cpu_mark = _cpu_ns(self._cpu_fd) if len(self._pending) == 1 else None
            finally:
                self._pending.pop(msg.id, None)
            if slot.answer is None:
                self._timed_out(f"no answer to request {msg.id} within {budget_s * 1000:.0f} ms")
            cpu = (cpu1 - cpu0) / 1e9 if cpu0 is not None and cpu1 is not None else None
            assert isinstance(slot.answer, Answer)
            return slot.answer, latency, cpu
        finally:
            self._slots.release()

    async def _wait_cpu(self, slot: _Pending, budget_s: float, cpu0: int) -> None:
        # Charge CPU time: look at the agent's CPU counter every 20 ms until it answers,
        # runs over its budget, or reaches the wall-clock backstop (the slot's deadline).
        while not slot.done:
            with trio.move_on_after(min(0.02, budget_s)):
                await _park(slot)
            cpu = _cpu_ns(self._cpu_fd)
            if cpu is not None and (cpu - cpu0) / 1e9 > budget_s and not slot.done:
                return

    def _add(self, rid: int, kind: type, deadline: float) -> _Pending:
        slot = self._pending[rid] = _Pending(kind, deadline)
        if deadline < self._wake_at:
            self._wake_at = deadline
            if self._watch is not None:
                self._watch.deadline = deadline
        return slot

    async def _watch_deadlines(self) -> None:
        """The process's one timer: at the earliest deadline of its pending requests, end
        those past theirs (unanswered: their tasks raise the timeout) and sleep until the
        next. A request whose deadline is not the earliest costs the timer nothing."""
        while True:
            with trio.CancelScope(deadline=self._wake_at) as self._watch:
                await trio.sleep_forever()
            now = trio.current_time()
            self._wake_at = math.inf
            for slot in list(self._pending.values()):
                if slot.done:
                    continue
                if slot.deadline <= now:
                    slot.finish()
                elif slot.deadline < self._wake_at:
                    self._wake_at = slot.deadline

    async def notify(self, msg: RefereeMessage, timeout_s: float = 5.0, *, defer: bool = False) -> None:
        """Send a message that needs no answer (match/deal start and end).

        With ``defer`` the line waits in an outbox and goes out in the same write as the
        next message: one system call and one wake-up of the agent instead of several.
        The agent sees the same lines in the same order."""
        self._check()
        if defer:
            self._outbox.append(encode(msg))
            return
        if not await self._send(encode(msg), trio.current_time() + timeout_s):
            self._timed_out(f"agent did not read its input for {timeout_s:.0f} s")

    async def ping(self, timeout_s: float = 5.0) -> float:
        """Round-trip a ping; returns the latency in seconds."""
        self._check()
        rid = self.new_id()
        t0 = trio.current_time()
        slot = self._add(rid, Pong, t0 + timeout_s)
        try:
            if await self._send(encode(Ping(id=rid)), slot.deadline):
                await _park(slot)
        finally:
            self._pending.pop(rid, None)
        if slot.answer is None:
            self._timed_out(f"no pong within {timeout_s:.1f} s")
        return trio.current_time() - t0

    # -- internals ------------------------------------------------------------------------
    def _check(self) -> None:
        if self.fault is not None:
            raise self.fault

    def _timed_out(self, detail: str) -> None:
        """Raise the fault that ended the wait: a crash seen meanwhile, else a timeout."""
        self._check()
        self._set_fault("timeout", detail)
        raise self.fault or AgentFault("timeout", detail)

    def _set_fault(self, code: str, detail: str) -> None:
        if self.fault is not None or self.stopping:
            return
        tail = " ".join(self.stderr_tail().split())[-300:]
        if tail and code in ("crash", "handshake"):
            detail = f"{detail}; stderr ends: {tail}"
        self.fault = AgentFault(code, detail)
        self._ready_event.set()
        for slot in list(self._pending.values()):
            slot.finish()

    async def _send(self, data: bytes, deadline: float = math.inf) -> bool:
        """Write ``data`` (after any deferred lines); False if ``deadline`` (trio time)
        passed first. Only a write that has to wait (a full pipe, another writer) sets
        up a cancel scope."""
        if self._outbox:
            data = b"".join(self._outbox) + data
            self._outbox.clear()
        if self.transcript is not None:
            self.transcript.extend(("to-agent", line) for line in data.rstrip(b"\n").split(b"\n"))
        if not self._send_lock.locked():
            # The common case: the pipe takes it all at once, with no await, so no other
            # writer can come between; the lock is for a write that has to wait.
            try:
                sent = os.write(self.proc.stdin.fileno(), data)
            except BlockingIOError:
                sent = 0
            except OSError:
                sent = -1
            if sent == len(data):
                return True
            if sent < 0:
                self._set_fault("crash", "its stdin is closed (the process exited?)")
                self._check()
            data = data[sent:]
        try:
            await _acquire(self._send_lock, deadline)
        except trio.TooSlowError:
            return False
        try:
            await _write(self.proc.stdin, data, deadline)
        except trio.TooSlowError:
            return False
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._set_fault("crash", "its stdin is closed (the process exited?)")
            self._check()
        finally:
            self._send_lock.release()
        return True

    def _on_line(self, line: bytes) -> None:
        if self.transcript is not None:
            self.transcript.append(("from-agent", line))
        try:
            msg = decode_agent_line(line)
        except AgentProtocolError as e:
            code = e.code if self.ready else "handshake"
            self._set_fault(code, str(e) if self.ready else f"expected a ready message, got: {e}")
            return
        if self.ready is None:
            if not isinstance(msg, Ready):
                self._set_fault("handshake", f"expected a ready message first, got a {msg.type} message")
                return
            self.ready = msg
            self._ready_event.set()
            return
        if isinstance(msg, Ready):
            self._set_fault("malformed", "a second ready message")
            return
        slot = self._pending.get(msg.id)
        if slot is not None and slot.done and slot.answer is None:
            return  # past its deadline a moment ago: its task is about to record the timeout
        if slot is None or slot.answer is not None or not isinstance(msg, slot.kind):
            what = "request" if isinstance(msg, Answer) else "ping"
            self._set_fault("unknown-id", f"{msg.type} message for id {msg.id}, which is not an outstanding {what}")
            return
        slot.answer = msg
        slot.finish()

    async def _read_stdout(self) -> None:
        splitter = LineSplitter(MAX_AGENT_LINE)
        stream = self.proc.stdout
        try:
            while self.fault is None:
                data = await _read(stream)
                if not data:
                    await self._on_eof()
                    return
                for line in splitter.feed(data):
                    self._on_line(line)
                    if self.fault is not None:
                        return
        except AgentProtocolError as e:
            self._set_fault(e.code if self.ready else "handshake", str(e))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await self._on_eof()

    async def _on_eof(self) -> None:
        if self.stopping:
            return
        with trio.move_on_after(0.05):  # an exit status makes a better message, if it comes at once
            await self.proc.wait()
        status = self.proc.returncode
        what = "closed its stdout" if status is None else _describe_exit(status, self.launch.nested)
        self._set_fault("crash" if self.ready else "handshake", f"{self.name} {what}")

    async def _watch_exit(self) -> None:
        # A child holding our pipes open would hide the exit from the stdout reader.
        status = await self.proc.wait()
        self.exit_code = status
        if not self.stopping:
            await trio.sleep(0.05)  # let the reader take the last lines first
            what = _describe_exit(status, self.launch.nested)
            self._set_fault("crash" if self.ready else "handshake", f"{self.name} {what}")

    async def _drain_stderr(self) -> None:
        log = None
        if self.log_path:  # readable by the referee's user only: not by the other seat, when sandboxed
            log = os.fdopen(os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        try:
            while True:
                try:
                    data = await self.proc.stderr.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                if not data:
                    return
                tail = self._stderr_tail
                tail += data
                del tail[:-STDERR_TAIL]
                if log is not None:
                    room = self._stderr_cap - self._stderr_bytes
                    log.write(data[: max(room, 0)])
                    if len(data) > room:
                        log.write(f"\n[arena: log truncated at {self._stderr_cap} bytes]\n".encode())
                        log.close()
                        log = None
                    else:
                        log.flush()
                self._stderr_bytes += len(data)
        finally:
            if log is not None:
                log.close()

    async def _handshake(self, hello: Hello, timeout_s: float) -> None:
        with trio.move_on_after(timeout_s):
            await self._send(encode(hello))
            await self._ready_event.wait()
        if self.fault is not None:
            raise AgentFault("handshake", self.fault.detail)
        if self.ready is None:
            self._set_fault("handshake", f"no ready message within {timeout_s:g} s")
            self._check()
        offered = hello.protocols or [hello.protocol]
        if self.ready.protocol not in offered:
            speaks = " or ".join(map(str, offered))
            why = f"agent speaks protocol version {self.ready.protocol}, this referee speaks {speaks} for this game"
            if self.ready.protocol == 1 and hello.protocol == TABLE_VERSION:
                why += f" ({hello.variant.get('name')} seats more than two agents: protocol/SPEC.md, version 2)"
            self._set_fault("handshake", why)
            self._check()
        if not self.ready.plays(hello.variant):
            games = ", ".join(self.ready.games or TWO_HANDED_GAMES)
            self._set_fault(
                "handshake", f"{self.name} plays {games} (its ready 'games'), not {hello.variant.get('name')}"
            )
            self._check()
        self._slots = trio.Semaphore(self.ready.capacity)
        if self.launch.nested:  # the agent has answered: it exists, two levels down
            self._init_pid, self.agent_pid = _sandbox_pids(self.proc.pid)
            if self.agent_pid is not None:
                self._cpu_fd = _open_cpu_counter(self.agent_pid)

    async def _stop(self, quit_grace_s: float, term_grace_s: float) -> None:
        """Ask, then tell, then force the whole process group to stop; always reap."""
        self.stopping = True
        proc = self.proc
        self.stopped_by = "exited" if proc.returncode is not None else None
        if proc.returncode is None:
            with trio.move_on_after(min(0.5, quit_grace_s)):
                try:
                    async with self._send_lock:
                        await _write(proc.stdin, encode(Quit()))
                except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
                    pass
            with trio.move_on_after(quit_grace_s):
                await proc.wait()
            self.stopped_by = "quit" if proc.returncode is not None else None
        if proc.returncode is None:
            _signal_group(proc.pid, signal.SIGTERM)
            with trio.move_on_after(term_grace_s):
                await proc.wait()
            self.stopped_by = "sigterm" if proc.returncode is not None else "sigkill"
        # SIGKILL the group even if the leader is gone: children may have outlived it.
        if _signal_group(proc.pid, signal.SIGKILL):
            await proc.wait()
            # Killing is asynchronous: wait until no member of the group is still running.
            with trio.move_on_after(2.0):
                while _group_running(proc.pid):
                    await trio.sleep(0.01)
        await proc.wait()
        if self.launch.nested:
            # The sandbox's init dies with its outer process, and the namespace with its
            # init; wait until it has (the kernel kills the rest before the init is gone).
            init = self._init_pid if self._init_pid is not None else _sandbox_pids(proc.pid)[0]
            with trio.move_on_after(2.0):
                while init is not None and _alive(init):
                    await trio.sleep(0.005)
        elif self.launch.uid is not None:
            with trio.move_on_after(2.0):
                while _kill_user(self.launch.uid):
                    await trio.sleep(0.01)
        self.exit_code = proc.returncode
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with trio.CancelScope(shield=True):
                try:
                    await stream.aclose()
                except trio.BrokenResourceError:
                    pass


# Trio's pipe streams checkpoint before every read and write, and read before waiting,
# which costs a pass of the scheduler and a system call each; a decision needs only a
# write, a wait and a read. These two do just that on the streams' non-blocking fds.
async def _write(stream: trio.lowlevel.FdStream, data: bytes, deadline: float = math.inf) -> None:
    """Raises `trio.TooSlowError` if the pipe stays full until ``deadline`` (trio time)."""
    fd = stream.fileno()
    with memoryview(data) as view:
        sent = 0
        while sent < len(data):
            try:
                sent += os.write(fd, view[sent:])
            except BlockingIOError:
                with trio.CancelScope(deadline=deadline) as cs:
                    await trio.lowlevel.wait_writable(fd)
                if cs.cancelled_caught:
                    raise trio.TooSlowError from None
            except OSError as e:  # EPIPE: the agent closed its stdin; EBADF: we closed it
                raise trio.BrokenResourceError(str(e)) from None


async def _read(stream: trio.lowlevel.FdStream) -> bytes:
    fd = stream.fileno()
    await trio.lowlevel.wait_readable(fd)
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return await _read(stream)
    except OSError as e:
        raise trio.BrokenResourceError(str(e)) from None


async def _acquire(lock: trio.StrictFIFOLock | trio.Semaphore, deadline: float = math.inf) -> None:
    """Take a lock or a semaphore (`trio.TooSlowError` at ``deadline``). The common,
    uncontended case skips the scheduler round trip of ``acquire()`` and the cancel scope:
    what follows is a write to a pipe and a wait for the answer."""
    try:
        lock.acquire_nowait()
    except trio.WouldBlock:
        with trio.CancelScope(deadline=deadline) as cs:
            await lock.acquire()
        if cs.cancelled_caught:
            raise trio.TooSlowError from None


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False if it has no members left (or is not ours)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _live_processes() -> Iterator[tuple[int, int, int]]:
    """(pid, process group, uid) of every process that is alive (zombies waiting to be
    reaped are not), from /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                uid = os.stat(f"/proc/{entry}").st_uid
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != b"Z":
                yield int(entry), int(fields[2]), uid


def _group_running(pgid: int) -> bool:
    """Whether any process of the group is alive."""
    return any(group == pgid for _, group, _ in _live_processes())


def _kill_user(uid: int) -> bool:
    """SIGKILL every live process of ``uid`` (a sandbox's own uid); False if none is left."""
    found = False
    for pid, _, owner in _live_processes():
        if owner == uid:
            try:
                os.kill(pid, signal.SIGKILL)
                found = True
            except OSError:
                continue
    return found


def _describe_exit(status: int | None, nested: bool = False) -> str:
    if status is None:
        return "is still running"
    if nested and 128 < status < 128 + 65:  # a sandbox's init reports a signal N as 128 + N
        status = 128 - status
    if status < 0:
        try:
            return f"was killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"was killed by signal {-status}"
    return f"exited with status {status}"


@asynccontextmanager
async def open_agent(
    launch: Launch,
    hello: Hello,
    *,
    log_path: Path | None = None,
    handshake_timeout_s: float = 10.0,
    quit_grace_s: float = 1.0,
    term_grace_s: float = 1.0,
    stderr_cap: int = STDERR_CAP,
    transcript: list[tuple[str, bytes]] | None = None,
) -> AsyncIterator[AgentProcess]:
    """Start an agent, handshake, yield it; stop and reap it on the way out.

    Raises `AgentFault` ("handshake") if it cannot be started or does not say ``ready``
    with our protocol version in time; the process is reaped before that error leaves.
    """
    try:
        proc = await trio.lowlevel.open_process(
            list(launch.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(launch.cwd),
            env=launch.env,
            # Its own process group, so we can kill its children too. (No PR_SET_PDEATHSIG:
            # Trio spawns from a worker thread, and the signal fires when that thread ends.
            # If the referee dies, an agent sees the end of its input and should exit.)
            start_new_session=True,
            **({"user": launch.user, "group": launch.user, "extra_groups": []} if launch.user is not None else {}),
        )
    except OSError as e:
        raise AgentFault("handshake", f"cannot start {launch.name} ({' '.join(launch.command)}): {e}") from None
    agent = AgentProcess(proc, launch, log_path, stderr_cap)
    agent.transcript = transcript
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent._read_stdout)
            nursery.start_soon(agent._drain_stderr)
            nursery.start_soon(agent._watch_exit)
            nursery.start_soon(agent._watch_deadlines)
            try:
                await agent._handshake(hello, handshake_timeout_s)
                yield agent
            finally:
                with trio.CancelScope(shield=True):
                    await agent._stop(quit_grace_s, term_grace_s)
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The background tasks never raise, so a group holds the one error of the body
        # (or of the handshake): give the caller that error, not a group.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    finally:
        if proc.returncode is None:  # only if something above failed before _stop ran
            _signal_group(proc.pid, signal.SIGKILL)
            with trio.CancelScope(shield=True):
                await proc.wait()


async def run_build(
    command: Sequence[str], cwd: Path, timeout_s: float = 300.0, *, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run an agent's build command; returns (exit status, combined output). Killed at
    the deadline with its whole process group."""
    try:
        with trio.move_on_after(timeout_s) as cs:
            result = await trio.run_process(
                list(command),
                # no input, but never a closed pipe: a sandbox's init takes a hang-up of
                # its input for the referee's end
                stdin=subprocess.DEVNULL,
                cwd=str(cwd),
                env=env,
                capture_stdout=True,
                stderr=subprocess.STDOUT,
                check=False,
                start_new_session=True,
                deliver_cancel=_kill_group,
            )
    except OSError as e:
        return 127, f"cannot run {' '.join(command)}: {e}"
    if cs.cancelled_caught:
        return 124, f"build timed out after {timeout_s:g} s"
    return result.returncode, result.stdout.decode("utf-8", "replace")


async def _kill_group(proc: trio.Process) -> None:
    _signal_group(proc.pid, signal.SIGKILL)
