"""How much a model of the opponent's play tells about its hand, against a known player.

    python bench/inference.py [--matches 40] [--seed 9] [--variant sixty-six] [--opponent heuristic]

Plays seeded in-process matches of the heuristic against ``--opponent`` (``heuristic`` or
``expert``, the agent's search at fixed work). At each open-phase decision of the first
seat, it compares the weight each model of `arena.bots.expert.LEAD_MODELS` gives the true
world (the opponent's real hand and talon) with the mean weight of 40 worlds sampled
uniformly from the seat's information. Prints per model: the decisions where the model
weighs anything, the mean weight of the true world and of the sampled ones, and the
information it adds, ``E[log(w(true) / mean w(sampled))]`` in nats (0: none; below 0:
the model misleads). Also prints how often the value model's best lead is the
heuristic's actual lead (its fidelity to the player it was taken from).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.bots import inference  # noqa: E402
from arena.bots.expert import LEAD_MODELS, ExpertStrategy  # noqa: E402
from arena.bots.heuristic import HeuristicStrategy  # noqa: E402
from arena.bots.inference import lead_values, view  # noqa: E402
from arena.bots.worlds import InfoSet, Worlds  # noqa: E402
from arena.game import derive_seed, get_variant, parse_card  # noqa: E402
from arena.game.state import LEAD  # noqa: E402
from arena.play.selfplay import play_match  # noqa: E402

#: What a decision is about, by the observation's phase (the heuristic's turns with a choice).
KINDS = ("lead", "follow", "draw")


class Spy:
    """The heuristic, shown the referee's state to measure the models at its decisions."""

    sees_state = True
    state = None

    def __init__(self, seed: int, variant, stats: dict, fidelity: list, kinds: dict):
        self.heuristic = HeuristicStrategy(seed)
        self.kinds = kinds
        self.rng = random.Random(seed)
        self.variant = variant
        self.stats = stats
        self.fidelity = fidelity

    def __call__(self, obs, legal):
        st = self.state
        info = InfoSet(obs, self.variant)
        if not info.strict and len(legal) > 1:
            worlds = Worlds(info)
            sampled = [worlds.sample(self.rng) for _ in range(40)]
            kind = obs["phase"] if obs["phase"] in KINDS else "lead"
            free = (info.pool & ~info.void & ~info.known).bit_count()
            self.kinds["hands"][kind].append(math.log(math.comb(free, info.need)))
            for name, weight in LEAD_MODELS.items():
                mean = sum(weight(w) for w in sampled) / len(sampled)
                true = weight(st)
                self.kinds[name][kind].append(math.log(max(true, 1e-12) / mean))
                if mean < 0.999:
                    self.stats[name].append((true, mean))
        action = self.heuristic(obs, legal)
        plays = [a for a in legal if a.startswith("play:")]
        if st.phase == LEAD and not st.strict and st.marriage_suit < 0 and action in plays and len(plays) > 1:
            me = obs["seat"]
            best = max(lead_values(st.hand[me], view(st, me)))[1]
            self.fidelity.append(best == parse_card(action[5:]))
        return action


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matches", type=int, default=40)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--opponent", choices=("heuristic", "expert"), default="heuristic")
    ap.add_argument("--temperature", type=float, default=inference.TEMPERATURE, help="the value model's")
    ap.add_argument("--floor", type=float, default=inference.FLOOR, help="the value model's least weight")
    ap.add_argument("--declined", type=float, default=inference.DECLINED, help="a marriage or exchange not taken")
    args = ap.parse_args()
    # The models read these at each call (an expert opponent's own weighting reads them too).
    inference.TEMPERATURE, inference.FLOOR, inference.DECLINED = args.temperature, args.floor, args.declined
    try:
        v = get_variant(args.variant)
    except ValueError as e:
        raise SystemExit(f"inference.py: {e}") from None
    stats: dict[str, list] = {name: [] for name in LEAD_MODELS}
    kinds: dict[str, dict[str, list]] = {name: {k: [] for k in KINDS} for name in ("hands", *LEAD_MODELS)}
    fidelity: list[bool] = []
    for k in range(args.matches):
        if args.opponent == "expert":
            opp = ExpertStrategy(k, variant=v, infer=True, lead_model="value")
        else:
            opp = HeuristicStrategy(k + 1000)
        play_match(v, derive_seed(args.seed, "match", k), [Spy(k, v, stats, fidelity, kinds), opp])
    print(
        f"{args.variant}, {args.matches} matches (seed {args.seed}), the heuristic against the {args.opponent}; "
        f"temperature {args.temperature:g}, floor {args.floor:g}, declined {args.declined:g}"
    )
    print(f"{'model':<12} {'decisions':>9} {'w(true)':>8} {'w(sampled)':>10} {'nats':>7}")
    for name, xs in stats.items():
        if not xs:
            print(f"{name:<12} {0:>9}")
            continue
        nats = sum(math.log(max(a, 1e-12) / b) for a, b in xs) / len(xs)
        true_w = sum(a for a, _ in xs) / len(xs)
        samp_w = sum(b for _, b in xs) / len(xs)
        print(f"{name:<12} {len(xs):>9} {true_w:>8.3f} {samp_w:>10.3f} {nats:>+7.3f}")
    print("nats at every open-phase decision, by what it decides (lead, follow, close or draw), and in all;")
    print("'hands': the log of the number of hands the opponent may hold (what there is to learn)")
    for name, by in kinds.items():
        cells = [f"{sum(x) / len(x):+.3f}" if x else "-" for x in by.values()]
        total = sum(sum(x) for x in by.values())
        print(f"{name:<12} {' / '.join(cells):>26}   {total:+9.1f} over {sum(len(x) for x in by.values())}")
    if fidelity:
        print(f"the value model's best lead is the heuristic's own in {sum(fidelity)} of {len(fidelity)} "
              f"open-phase leads ({100 * sum(fidelity) / len(fidelity):.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
