"""Screen a change to the expert in process: duplicate pairs between two configurations.

    python bench/strength.py A B [--pairs 400] [--seed 21] [--variant sixty-six] [--workers 2]

``A`` and ``B`` are each ``heuristic``, or ``expert`` followed by settings of
`ExpertStrategy` as JSON (its keyword arguments or attributes), e.g.
``'expert{"infer": true}'`` or ``'expert{"solve_tail": true}'``; ``oracle`` and
``hand-oracle`` take the same settings and search the true world (`OracleStrategy`) or
the opponent's true hand (`HandOracleStrategy`), which only an in-process referee can
show them. Pair ``k`` plays the match seed ``derive_seed(seed, "match", k)`` twice, A
in each seat, with the in-process referee (`arena.play.selfplay.play_match`) and the
fixed-work budget (``budget="samples"``, unless the JSON says otherwise), so a run
depends only on its arguments, not on the machine's load. With ``"budget": "time"``
and a ``move_ms`` a player searches as the agent does, against the clock (``"deep_playouts":
450`` for the agent's lookahead), and the run depends on the load too.

Prints A's score over the pairs with its Elo and 95% interval (from the spread of the
pair scores), the pairs won 0, 1 or 2 by A, and A's game-point margin per deal with its
interval. This is a screen, faster and free of clock noise; what ships is proven with
``arena compare`` on real agent processes (docs/agents-strength.md).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import multiprocessing
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots.expert import ExpertStrategy, HandOracleStrategy, OracleStrategy  # noqa: E402
from arena.bots.heuristic import HeuristicStrategy  # noqa: E402
from arena.game import derive_seed, get_variant  # noqa: E402
from arena.play.selfplay import play_match  # noqa: E402

#: The searching players by name: the expert and its two measuring oracles.
SEARCHERS: dict[str, type[ExpertStrategy]] = {
    "expert": ExpertStrategy,
    "oracle": OracleStrategy,
    "hand-oracle": HandOracleStrategy,
}


def parse_player(text: str) -> tuple[str, dict[str, Any]]:
    """``heuristic``, or ``expert``, ``oracle`` or ``hand-oracle``, each with optional ``{...json kwargs...}``."""
    name, brace, rest = text.partition("{")
    if name not in ("heuristic", *SEARCHERS) or (name == "heuristic" and brace):
        *most, last = SEARCHERS
        raise SystemExit(
            f"{Path(sys.argv[0]).name}: a player is heuristic, or {', '.join(most)} or {last} with optional "
            f"{{JSON}}, got {text!r}"
        )
    try:
        kwargs = json.loads(brace + rest) if brace else {}
    except json.JSONDecodeError as e:
        raise SystemExit(f"{Path(sys.argv[0]).name}: {text!r}: bad JSON: {e}") from None
    return name, kwargs


def make(player: tuple[str, dict[str, Any]], seed: int, variant: str) -> Any:
    name, kwargs = player
    if name == "heuristic":
        return HeuristicStrategy(seed)
    cls = SEARCHERS[name]
    params = inspect.signature(cls).parameters
    strategy = cls(seed, variant=variant, **{k: v for k, v in kwargs.items() if k in params})
    for k, v in kwargs.items():
        if k not in params:  # a setting that is an attribute (solve_tail, match_aware, ...)
            if not hasattr(strategy, k):
                raise SystemExit(f"{Path(sys.argv[0]).name}: {cls.__name__} has no setting {k!r}")
            setattr(strategy, k, v)
    return strategy


def play_pair(job: tuple[int, int, tuple, tuple, str]) -> list[tuple[float, int, int]]:
    """(A's match score, A's game-point margin, deals) for both matches of pair ``k``."""
    k, seed, a, b, variant = job
    match_seed = derive_seed(seed, "match", k)
    out = []
    for a_seat in (0, 1):
        conf = [a, b] if a_seat == 0 else [b, a]
        players = [make(conf[s], derive_seed(seed, "strategy", s ^ a_seat, k), variant) for s in range(2)]
        match = play_match(variant, match_seed, players)
        margin = 0
        for st in match.deals:
            r = st.result
            if r.winner is not None:
                margin += r.game_points if r.winner == a_seat else -r.game_points
        out.append((1.0 if match.result.winner == a_seat else 0.0, margin, len(match.deals)))
    return out


def elo(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    a, b = parse_player(args.a), parse_player(args.b)
    get_variant(args.variant)
    for p in (a, b):  # a bad setting is said here, once, not in every worker
        make(p, 0, args.variant)
    jobs = [(k, args.seed, a, b, args.variant) for k in range(args.pairs)]
    with multiprocessing.Pool(args.workers) as pool:
        results = pool.map(play_pair, jobs, chunksize=1)
    n = len(results)
    scores = [(m0[0] + m1[0]) / 2 for m0, m1 in results]
    mean = sum(scores) / n
    se = math.sqrt(sum((s - mean) ** 2 for s in scores) / (n - 1) / n)
    margins = [m0[1] + m1[1] for m0, m1 in results]
    deals = sum(m0[2] + m1[2] for m0, m1 in results)
    m_mean = sum(margins) / n
    m_se = math.sqrt(sum((m - m_mean) ** 2 for m in margins) / (n - 1) / n)
    counts = [sum(1 for s in scores if s == x) for x in (0.0, 0.5, 1.0)]
    print(f"{args.a} against {args.b}, {args.variant}, {n} pairs (seed {args.seed})")
    print(f"score {mean:.3f}: Elo {elo(mean):+.1f} [{elo(mean - 1.96 * se):+.1f}, {elo(mean + 1.96 * se):+.1f}]; "
          f"pairs won 0/1/2: {counts[0]}/{counts[1]}/{counts[2]}")
    print(f"game points a deal, A - B: {m_mean * n / deals:+.3f} ± {1.96 * m_se * n / deals:.3f} ({deals} deals)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
