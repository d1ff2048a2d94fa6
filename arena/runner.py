"""The tournament runner: many seeded matches at once under Trio, each stored atomically.

Structure (every task lives in a nursery; nothing outlives `run_tournament`):

    processes nursery          one task per agent process (pools start them on demand)
      work nursery
        writer                 the only task that writes the store; takes finished
                               matches from an unbuffered channel, one transaction each
        matches nursery        one task per match, at most ``concurrency`` at a time
                               (a CapacityLimiter taken before the task is created)

A match leases a process per seat from its agent's pool, plays with the referee, and
sends its record to the writer. A fault forfeits that match only; the pool replaces
the faulted process for later matches. Matches already in the store are skipped, so a
killed run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import trio

from .game import derive_seed
from .pool import AgentPool
from .protocol import PROTOCOL_VERSION, Hello
from .referee import MatchRecord, play_match
from .schedule import MatchSpec, TournamentConfig
from .store import Store


@dataclasses.dataclass(frozen=True)
class Finished:
    spec: MatchSpec
    record: MatchRecord
    started: float
    finished: float


async def run_tournament(
    cfg: TournamentConfig,
    specs: list[MatchSpec],
    store: Store,
    run_id: int,
    *,
    on_finished: Callable[[Finished], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    logs: Path | None = None,
) -> int:
    """Play ``specs`` (those not already in the store) and store each; returns how many
    were played. ``should_stop`` is asked after each stored match: when it says yes (an
    SPRT has decided), matches still in flight are cancelled and not stored."""
    done = store.done_ids()
    todo = [s for s in specs if s.match_id not in done]
    if not todo:
        return 0
    played = 0
    send, recv = trio.open_memory_channel[Finished](0)
    matches_scope = trio.CancelScope()

    async def writer() -> None:
        nonlocal played
        async with recv:
            async for f in recv:
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
                played += 1
                if on_finished is not None:
                    on_finished(f)
                if should_stop is not None and should_stop():
                    matches_scope.cancel()

    async with trio.open_nursery() as processes:
        pools = {
            m.name: AgentPool(
                m,
                Hello(
                    protocol=PROTOCOL_VERSION,
                    variant=cfg.variant.to_dict(),
                    time_control=cfg.time_control.to_dict(),
                    seed=derive_seed(cfg.seed, "agent", m.name),
                ),
                processes,
                concurrency=cfg.concurrency,
                logs=logs,
            )
            for m in cfg.agents
        }
        limiter = trio.CapacityLimiter(cfg.concurrency)

        async def play_one(spec: MatchSpec, out: trio.MemorySendChannel[Finished]) -> None:
            async with out:
                try:
                    first, second = sorted(range(2), key=lambda s: spec.seats[s])  # lease in name order
                    async with pools[spec.seats[first]].lease() as p_first:
                        async with pools[spec.seats[second]].lease() as p_second:
                            seated = [p_first, p_second] if first == 0 else [p_second, p_first]
                            t0 = time.time()
                            rec = await play_match(spec.match_id, spec.seed, cfg.variant, seated, cfg.time_control)
                            t1 = time.time()
                finally:
                    limiter.release_on_behalf_of(spec)
                await out.send(Finished(spec, rec, t0, t1))

        try:
            async with trio.open_nursery() as work:
                work.start_soon(writer)
                async with send:
                    with matches_scope:
                        async with trio.open_nursery() as matches:
                            for spec in todo:
                                await limiter.acquire_on_behalf_of(spec)
                                matches.start_soon(play_one, spec, send.clone())
        finally:
            for pool in pools.values():
                pool.close()
    return played
