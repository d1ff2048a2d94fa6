"""``arena ladder run``: rounds of scheduled pairs, until interrupted or N matches.

Each round: finish the open round if a killed run left one, else plan a new one
(`arena.ladder.rounds.plan_round`), play its matches, and record the ratings (`rounds_of`,
shared by both ways of playing). With a match limit, the matches still in flight when it
is reached are cancelled and not stored: their pair stays open, and the next run plays
them.

`run_ladder` plays here: one process nursery holds the agents' pools for the whole run, so
a process serves many rounds; a round's pools for agents it does not schedule are closed.
`run_ladder_on_cluster` plays each round on a Dask cluster (`arena.tournament.cluster`):
each entry's folder is shipped once per run, by content; the workers build it and run it
in the ladder's sandbox, refusing, as a local run does, where it cannot be isolated; this
process writes each match as its chunk returns. Results are the same either way: a match
depends only on its spec and the agents' hello seeds, both from the ladder's secret.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import trio

from ..runtime.sandbox import Sandbox
from ..tournament.runner import Finished, Pools, play, write_finished
from . import rounds as ladder
from .rounds import LadderConfig
from .store import LadderStore

if TYPE_CHECKING:
    from distributed import Client

def rounds_of(
    cfg: LadderConfig,
    store: LadderStore,
    *,
    played: Callable[[], int],
    max_matches: int | None = None,
    max_rounds: int | None = None,
    on_round: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """The rounds to play, as (round, its pairs or tables); (round, []) when fewer agents
    are active than a match seats and no limit is set: the caller waits for submissions, then asks again.
    When a round is handed back, the caller plays it (``played()``: this run's matches so
    far). A round then fully stored is finished here (its ratings recorded, ``on_round``
    told); one left open (the match limit) ends the run, and the next run plays it first."""
    rounds = 0
    limited = max_matches is not None or max_rounds is not None
    while (max_matches is None or played() < max_matches) and (max_rounds is None or rounds < max_rounds):
        round_, pairs = ladder.plan_round(cfg, store)
        if pairs and ladder.open_pairs_done(store, pairs):
            # a killed run recorded every match of this round but not its ratings:
            # record them now; the round is not one of this run's rounds
            ladder.finish_round(store, round_)
            if on_round is not None:
                on_round(round_, played())
            continue
        if not pairs and limited:
            return
        yield round_, pairs
        if not pairs:
            continue
        if not ladder.open_pairs_done(store, pairs):
            return  # stopped by the match limit: the round stays open for the next run
        ladder.finish_round(store, round_)
        rounds += 1
        if on_round is not None:
            on_round(round_, played())


def _keys(pairs: list[dict[str, Any]]) -> list[str]:
    """The entries a round's pairs or tables seat."""
    return sorted({a for p in pairs for a in p["agents"]})


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
    """Play rounds here; returns the matches played. ``max_matches`` counts this run's
    matches only (N more, whatever the store held). ``on_round(round, matches)`` is called
    after each round is recorded. With fewer than two active agents it waits for
    submissions (polling every ``idle_wait_s``), unless a limit is set: then it stops."""
    played = 0

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
            for _round, pairs in rounds_of(cfg, store, played=lambda: played, max_matches=max_matches,
                                           max_rounds=max_rounds, on_round=on_round):  # fmt: skip
                if not pairs:
                    await trio.sleep(idle_wait_s)
                    continue
                manifests = ladder.manifests(store, _keys(pairs))
                for key in list(pools.pools):  # agents no longer scheduled: stop their processes
                    if key not in manifests:
                        pools.close(key)
                await play(ladder.specs_for(pairs), manifests, pools, store, run_id, on_finished=finished,
                           should_stop=limit_reached)  # fmt: skip
        finally:
            pools.close()
    return played


def run_ladder_on_cluster(
    cfg: LadderConfig,
    store: LadderStore,
    run_id: int,
    client: Client,
    *,
    unsafe: bool = False,
    max_matches: int | None = None,
    max_rounds: int | None = None,
    on_finished: Callable[[Finished], None] | None = None,
    on_round: Callable[[int, int], None] | None = None,
    idle_wait_s: float = 5.0,
    **hooks: Any,
) -> int:
    """Play rounds as `run_ladder` does, each on the Dask cluster of ``client``
    (`arena.tournament.cluster.play_on_cluster`); returns the matches played. ``unsafe``:
    ``--unsafe-sandbox``, which lets workers run the agents where they cannot isolate
    them. ``hooks`` go to `play_on_cluster` (``note``, ``warn``, ``on_chunk``, ``tick``,
    ...). `arena.tournament.cluster.ClusterLost` when the scheduler goes away; `UserError`
    with a worker's one line (no bubblewrap there, a failed build): the round stays open."""
    from ..tournament.cluster import play_on_cluster, ship
    from ..tournament.cluster_worker import RunSettings, pack

    settings = RunSettings(cfg.variant, cfg.time_control, ladder.root_seed(cfg, store), cfg.concurrency, cfg.sandbox,
                           cfg.config_hash, submitted=f"ladder {cfg.name!r}", unsafe=unsafe,
                           build_timeout_s=float(cfg.submit.build_timeout_s))  # fmt: skip
    run = f"ladder-{cfg.config_hash[:12]}-{time.time_ns():x}"  # workers keep the agents' processes across rounds
    shipped: dict[str, Any] = {}  # entry key: its archive on the cluster, sent once per run
    played = 0

    def limit_reached() -> bool:
        return max_matches is not None and played >= max_matches

    def write(f: Finished) -> None:
        nonlocal played
        write_finished(store, run_id, f)
        played += 1
        if on_finished is not None:
            on_finished(f)

    for _round, pairs in rounds_of(cfg, store, played=lambda: played, max_matches=max_matches,
                                   max_rounds=max_rounds, on_round=on_round):  # fmt: skip
        if not pairs:
            time.sleep(idle_wait_s)
            continue
        keys = _keys(pairs)
        manifests = ladder.manifests(store, keys)
        new = [k for k in keys if k not in shipped]
        if new:
            shipped.update(zip(new, ship(client, [pack(manifests[k], name=k) for k in new]), strict=True))
        done = store.done_ids() - store.unplayed_ids()  # lost before play: played again, as locally
        todo = [s for s in ladder.specs_for(pairs) if s.match_id not in done]
        play_on_cluster(client, settings, todo, write, shipped=[shipped[k] for k in keys], run=run,
                        should_stop=limit_reached, logs=cfg.logs_dir, **hooks)  # fmt: skip
    return played
