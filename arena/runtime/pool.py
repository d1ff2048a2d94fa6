"""Agent process pools: processes started on demand and reused across matches.

One `AgentPool` per agent. A match leases one process per seat for its whole length; a
process serves up to its declared capacity of matches at once (each match has at most
one request outstanding per seat, so the referee never exceeds the capacity). A lease
goes to the least loaded process with room; a pool starts a new process only when no
process has room and none being started will have room for the leases waiting on it,
so an agent never has more than ceil(matches in flight / capacity) processes (agents
of capacity 16 at 32 matches in flight: two; at 2000, against agents of capacity 1000:
two, not two thousand). The capacity is only known from a process's ``ready``: until
the first handshake of the pool's life has succeeded, one process starts at a time and
the other leases wait for it (a run's opening burst would otherwise start one process
per match). ``concurrency`` bounds the processes too (ceil(concurrency / capacity)). A
process that faulted (crash, timeout, ...) is retired as soon as its matches release
it, and the next lease that finds no room starts a fresh one.

An agent that cannot be started (its program is missing, it exits or says nothing
before ``ready``) is not started again and again: after `MAX_START_FAILURES` failed
starts in a row, or at once when `arena.runtime.toolchain` finds a program it needs missing,
the pool is withdrawn: every lease gets the fault that stopped it at once (the match
is a forfeit before play, which a resumed run plays again), and ``on_withdrawn`` is
told once.

Every process lives in a task of the runner's nursery; `close` retires them all.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from ..protocol.codec import Hello
from . import toolchain
from .agents import Manifest
from .process import AgentFault, AgentProcess, open_agent
from .sandbox import Sandbox

#: A process is replaced between matches once it has used this share of its CPU limit.
RECYCLE_AT = 0.8
#: Failed starts in a row after which an agent is taken out of the run.
MAX_START_FAILURES = 3


@dataclasses.dataclass(eq=False)
class _Slot:
    agent: AgentProcess
    retire: trio.Event = dataclasses.field(default_factory=trio.Event)
    in_use: int = 0


class AgentPool:
    """The processes of one agent under one hello (variant, time control, seed)."""

    def __init__(
        self,
        manifest: Manifest,
        hello: Hello,
        nursery: trio.Nursery,
        *,
        concurrency: int,
        sandbox: Sandbox,
        logs: Path | None = None,
        label: str | None = None,
        on_withdrawn: Callable[[AgentPool], None] | None = None,
    ):
        self.manifest = manifest
        self.hello = hello
        self.nursery = nursery
        self.concurrency = concurrency
        self.logs = logs
        self.sandbox = sandbox
        self.label = label or manifest.name  # names the processes' logs: LABEL-N.log
        self.slots: list[_Slot] = []
        self.starting = 0
        self.started = 0  # processes started over the pool's life
        self.capacity = 1  # learnt from the first ready
        self.known = False  # whether a handshake has told the capacity
        self._queued = 0  # leases waiting for a process being started
        self.closed = False
        self._changed = trio.Event()
        self.failed_starts = 0  # in a row: a start that reaches ready sets it back to 0
        #: Why the agent was taken out of the run (every lease gets it), or None.
        self.withdrawn: AgentFault | None = None
        self.on_withdrawn = on_withdrawn
        lacking = toolchain.missing(manifest)
        if lacking:
            self._withdraw(AgentFault("handshake", "; ".join(m.line() for m in lacking)))

    def _limit(self) -> int:
        return max(1, math.ceil(self.concurrency / self.capacity))

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[AgentProcess | AgentFault]:
        """A process for one match, or the `AgentFault` that stopped one from starting."""
        while True:
            if self.withdrawn is not None:
                yield self.withdrawn
                return
            for s in list(self.slots):  # a process that died between matches
                if s.agent.fault is not None and s.in_use == 0:
                    self._retire(s)
            live = [s for s in self.slots if s.agent.fault is None]
            room = [s for s in live if s.in_use < s.agent.capacity]
            if room:
                slot = min(room, key=lambda s: s.in_use)
            elif self.starting and (not self.known or self.starting + self._queued < self.starting * self.capacity):
                # A process being started will take this lease (or, before the first
                # handshake, tell the capacity): wait for it rather than start another.
                self._queued += 1
                try:
                    await self._changed.wait()
                finally:
                    self._queued -= 1
                continue
            elif len(self.slots) + self.starting < self._limit():
                got = await self._start()
                if isinstance(got, AgentFault):
                    self.failed_starts += 1
                    if self.failed_starts >= MAX_START_FAILURES:
                        self._withdraw(got)
                    yield got
                    return
                self.failed_starts = 0
                slot = got
                slot.in_use -= 1  # held for this lease since it joined the pool (below)
            elif live:
                slot = min(live, key=lambda s: s.in_use)
            else:
                await self._changed.wait()
                continue
            break
        slot.in_use += 1
        try:
            yield slot.agent
        finally:
            slot.in_use -= 1
            if slot.in_use == 0 and (slot.agent.fault is not None or self._worn(slot.agent)):
                self._retire(slot)
            self._notify()

    async def _start(self) -> _Slot | AgentFault:
        self.starting += 1
        try:
            return await self.nursery.start(self._serve)
        finally:
            self.starting -= 1
            self._notify()

    async def _serve(self, task_status: trio.TaskStatus) -> None:
        """One process's life: start it, hand it to the pool, stop it when retired."""
        self.started += 1
        n = self.started
        log = self.logs / f"{self.label}-{n}.log" if self.logs else None
        try:
            with self.sandbox.launch(self.manifest) as launch:
                async with open_agent(launch, self.hello, log_path=log) as agent:
                    slot = _Slot(agent, in_use=1)  # its starter's: no waiting lease takes its room first
                    self.capacity = agent.capacity
                    self.known = True
                    self.slots.append(slot)
                    task_status.started(slot)
                    await slot.retire.wait()
        except AgentFault as f:
            task_status.started(f)

    def _withdraw(self, fault: AgentFault) -> None:
        """Take the agent out of the run: no more starts; every lease gets ``fault``."""
        if self.withdrawn is None:
            self.withdrawn = fault
            self._notify()  # leases waiting for a process get the fault instead
            if self.on_withdrawn is not None:
                self.on_withdrawn(self)

    def _worn(self, agent: AgentProcess) -> bool:
        """Whether a process has used most of its sandbox's CPU-time limit: it is replaced
        between matches, before the kernel stops it in the middle of one."""
        limits = self.sandbox.policy.limits if self.sandbox.policy.enabled else None
        used = agent.cpu_total_s() if limits else None
        return used is not None and used > RECYCLE_AT * limits.cpu_s

    def _retire(self, slot: _Slot) -> None:
        if slot in self.slots:
            self.slots.remove(slot)
        slot.retire.set()

    def close(self) -> None:
        """Retire every process (their tasks stop and reap them)."""
        self.closed = True
        for slot in list(self.slots):
            self._retire(slot)
