"""The tournament runner: many seeded matches at once under Trio, each stored atomically.

Structure (every task lives in a nursery; nothing outlives `run_tournament`):

    processes nursery          one task per agent process (pools start them on demand)
      work nursery
        writer                 the only task that writes the store; takes finished
                               matches from an unbuffered channel, one transaction each
        matches nursery        one task per match, at most ``concurrency`` at a time
                               (a CapacityLimiter taken before the task is created)

A match leases a process per seat (two, or three or four at a table) from its agent's pool
(`Pools`, which a ladder keeps across its rounds), plays with the referee, and sends its record to the writer. Every
process runs in the run's `Sandbox`. A fault forfeits that match only; the pool replaces
the faulted process for later matches. An agent that cannot be started is taken out of
the run by its pool (`arena.runtime.pool.MAX_START_FAILURES`), its cause printed once, and its
remaining matches are forfeits at once. Matches already in the store are skipped, so a
killed run resumes where it stopped; but a match recorded as lost before play (a seat
could not be started: `Store.unplayed_ids`) is played again, so fixing the cause and
resuming gives real results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from ..game import Variant, derive_seed
from ..play.referee import MatchRecord, play_match
from ..protocol.codec import Hello, TimeControl
from ..results.store import Store
from ..runtime.agents import Manifest
from ..runtime.pool import AgentPool
from ..runtime.sandbox import Sandbox
from .schedule import MatchSpec, TournamentConfig


@dataclasses.dataclass(frozen=True)
class Finished:
    spec: MatchSpec
    record: MatchRecord
    started: float
    finished: float


class Pools:
    """One `AgentPool` per seat name, made on first use, in the caller's nursery."""

    def __init__(
        self,
        nursery: trio.Nursery,
        *,
        variant: Variant,
        time_control: TimeControl,
        seed: int,
        concurrency: int,
        sandbox: Sandbox,
        logs: Path | None = None,
        warn: Callable[[str], None] | None = None,
    ):
        self.nursery = nursery
        self.variant = variant
        self.time_control = time_control
        self.seed = seed
        self.concurrency = concurrency
        self.sandbox = sandbox
        self.logs = logs
        self.pools: dict[str, AgentPool] = {}
        #: Where the one line about an agent taken out of the run goes (default: stderr).
        self.warn = warn if warn is not None else (lambda line: print(f"arena: {line}", file=sys.stderr, flush=True))

    @classmethod
    def for_config(
        cls, nursery: trio.Nursery, cfg: Any, sandbox: Sandbox, logs: Path | None,
        warn: Callable[[str], None] | None = None,
    ) -> Pools:  # fmt: skip
        """Pools for a tournament's or a ladder's config (variant, time control, seed, concurrency)."""
        return cls(
            nursery,
            variant=cfg.variant,
            time_control=cfg.time_control,
            seed=cfg.seed,
            concurrency=cfg.concurrency,
            sandbox=sandbox,
            logs=logs,
            warn=warn,
        )

    def get(self, name: str, manifest: Manifest) -> AgentPool:
        pool = self.pools.get(name)
        if pool is None:
            hello = Hello.for_game(
                self.variant.to_dict(), self.time_control.to_dict(), derive_seed(self.seed, "agent", name)
            )
            pool = self.pools[name] = AgentPool(
                manifest,
                hello,
                self.nursery,
                concurrency=self.concurrency,
                sandbox=self.sandbox,
                logs=self.logs,
                label=name,
                on_withdrawn=self._withdrawn,
            )
        return pool

    def _withdrawn(self, pool: AgentPool) -> None:
        fault = pool.withdrawn
        assert fault is not None
        if pool.failed_starts:
            n = pool.failed_starts
            cause = f"agent {pool.label!r} cannot be started ({n} starts failed in a row: {fault.detail})"
        else:  # arena.runtime.toolchain's line, which names the agent
            cause = fault.detail
        self.warn(
            f"{cause}; it is out of this run: its matches are forfeits before play, which a resumed run "
            "(--resume) plays again once that is fixed"
        )

    def close(self, name: str | None = None) -> None:
        """Retire the processes of one seat name, or of all."""
        for key in [name] if name is not None else list(self.pools):
            pool = self.pools.pop(key, None)
            if pool is not None:
                pool.close()


def write_finished(store: Store, run_id: int | None, f: Finished) -> None:
    """Store one finished match (atomically; the store refuses one already recorded)."""
    store.write_match(
        run_id=run_id,
        index=f.spec.index,
        match_id=f.spec.match_id,
        pairing=f.spec.pairing,
        pair_index=f.spec.pair_index,
        game=f.spec.game,
        seats=f.spec.seats,
        record=f.record,
        started=f.started,
        finished=f.finished,
    )


async def play(
    specs: list[MatchSpec],
    manifests: dict[str, Manifest],
    pools: Pools,
    store: Store,
    run_id: int,
    *,
    on_finished: Callable[[Finished], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Play ``specs`` (those not already in the store) and store each; returns how many
    were played. ``manifests`` maps the specs' seat names to agents. ``should_stop`` is
    asked after each stored match: when it says yes (an SPRT has decided, a ladder was
    asked for N matches), matches still in flight are cancelled and not stored. A store
    error in the writer (a full disk) cancels them too, and is raised. A match stored as
    lost before play (a seat could not be started) is played again and replaces it."""
    done = store.done_ids() - store.unplayed_ids()
    todo = [s for s in specs if s.match_id not in done]

    def write(f: Finished) -> None:
        write_finished(store, run_id, f)
        if on_finished is not None:
            on_finished(f)

    return await play_into(todo, manifests, pools, write, should_stop=should_stop)


async def play_into(
    todo: list[MatchSpec],
    manifests: dict[str, Manifest],
    pools: Pools,
    sink: Callable[[Finished], None],
    *,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Play every spec of ``todo`` and hand each finished match to ``sink``, from one
    writer task (so ``sink`` may write a store); returns how many were handed over.
    `play` sinks into the store; a cluster worker (`arena.tournament.cluster_worker`)
    into a list it returns. An error raised by ``sink`` cancels the matches in flight."""
    if not todo:
        return 0
    played = 0
    send, recv = trio.open_memory_channel[Finished](0)
    matches_scope = trio.CancelScope()

    async def writer() -> None:
        nonlocal played
        async with recv:
            async for f in recv:
                sink(f)
                played += 1
                if should_stop is not None and should_stop():
                    matches_scope.cancel()

    limiter = trio.CapacityLimiter(pools.concurrency)

    async def play_one(spec: MatchSpec, out: trio.MemorySendChannel[Finished]) -> None:
        async with out:
            try:
                async with contextlib.AsyncExitStack() as leases:
                    seated: list[Any] = [None] * len(spec.seats)
                    for s in sorted(range(len(spec.seats)), key=lambda s: spec.seats[s]):  # lease in name order
                        pool = pools.get(spec.seats[s], manifests[spec.seats[s]])
                        seated[s] = await leases.enter_async_context(pool.lease())
                    t0 = time.time()
                    rec = await play_match(spec.match_id, spec.seed, pools.variant, seated, pools.time_control)
                    t1 = time.time()
            finally:
                limiter.release_on_behalf_of(spec)
            try:
                await out.send(Finished(spec, rec, t0, t1))
            except trio.BrokenResourceError:
                pass  # the writer stopped on a store error (a full disk): that error ends the run

    async with trio.open_nursery() as work:
        work.start_soon(writer)
        async with send:
            with matches_scope:
                async with trio.open_nursery() as matches:
                    for spec in todo:
                        await limiter.acquire_on_behalf_of(spec)
                        matches.start_soon(play_one, spec, send.clone())
    return played


async def run_tournament(
    cfg: TournamentConfig,
    specs: list[MatchSpec],
    store: Store,
    run_id: int,
    *,
    on_finished: Callable[[Finished], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    logs: Path | None = None,
    sandbox: Sandbox | None = None,
    warn: Callable[[str], None] | None = None,
) -> int:
    """Play a tournament's ``specs`` with `play`, its processes started on demand and
    all stopped at the end; each runs in ``sandbox`` (default: a new default one).
    ``warn`` gets the one line about an agent taken out of the run (default: stderr)."""
    with contextlib.ExitStack() as stack:
        if sandbox is None:
            sandbox = stack.enter_context(Sandbox())
        async with trio.open_nursery() as processes:
            pools = Pools.for_config(processes, cfg, sandbox, logs, warn)
            try:
                return await play(
                    specs,
                    {m.name: m for m in cfg.agents},
                    pools,
                    store,
                    run_id,
                    on_finished=on_finished,
                    should_stop=should_stop,
                )
            finally:
                pools.close()
