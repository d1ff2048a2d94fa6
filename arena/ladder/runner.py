"""``arena ladder run``: rounds of scheduled pairs, until interrupted or N matches.

One process nursery holds the agents' pools for the whole run, so a process serves many
rounds; a round's pools for agents retired meanwhile are closed. Each round: finish the
open round if a killed run left one, else plan a new one (`arena.ladder.rounds.plan_round`),
play its matches with `arena.tournament.runner.play`, and record the ratings. With a match limit,
the matches still in flight when it is reached are cancelled and not stored: their pair
stays open, and the next run plays them.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from ..runtime.sandbox import Sandbox
from ..tournament.runner import Finished, Pools, play
from . import rounds as ladder
from .rounds import LadderConfig
from .store import LadderStore


async def run_ladder(
    cfg: LadderConfig,
    store: LadderStore,
    run_id: int,
    sandbox: Sandbox,
    *,
    max_matches: int | None = None,
    max_rounds: int | None = None,
    on_finished: Callable[[Finished], None] | None = None,
    on_round: Callable[[int, int], None] | None = None,
    idle_wait_s: float = 5.0,
) -> int:
    """Play rounds; returns the matches played. ``max_matches`` counts this run's matches
    only (N more, whatever the store held). ``on_round(round, matches)`` is called
    after each round is recorded. With fewer than two active agents it waits for
    submissions (polling every ``idle_wait_s``), unless a limit is set: then it stops."""
    played = 0
    rounds = 0

    def limit_reached() -> bool:
        return max_matches is not None and played >= max_matches

    def finished(f: Finished) -> None:
        nonlocal played
        played += 1
        if on_finished is not None:
            on_finished(f)

    async with trio.open_nursery() as processes:
        pools = Pools(
            processes,
            variant=cfg.variant,
            time_control=cfg.time_control,
            seed=ladder.root_seed(cfg, store),  # agents' hello seeds come from the secret root too
            concurrency=cfg.concurrency,
            sandbox=sandbox,
            logs=cfg.logs_dir,
        )
        try:
            while not limit_reached() and (max_rounds is None or rounds < max_rounds):
                round_, pairs = ladder.plan_round(cfg, store)
                if pairs and ladder.open_pairs_done(store, pairs):
                    # a killed run recorded every match of this round but not its ratings:
                    # record them now; the round is not one of this run's rounds
                    ladder.finish_round(store, round_)
                    if on_round is not None:
                        on_round(round_, played)
                    continue
                if not pairs:
                    if max_matches is not None or max_rounds is not None:
                        break
                    await trio.sleep(idle_wait_s)
                    continue
                keys = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs})
                manifests = ladder.manifests(store, keys)
                for key in list(pools.pools):  # agents no longer scheduled: stop their processes
                    if key not in manifests:
                        pools.close(key)
                await play(
                    ladder.specs_for(pairs),
                    manifests,
                    pools,
                    store,
                    run_id,
                    on_finished=finished,
                    should_stop=limit_reached,
                )
                if not ladder.open_pairs_done(store, pairs):
                    break  # stopped by the match limit: the round stays open for the next run
                ladder.finish_round(store, round_)
                rounds += 1
                if on_round is not None:
                    on_round(round_, played)
        finally:
            pools.close()
    return played
