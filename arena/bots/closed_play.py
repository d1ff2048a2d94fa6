"""The value of a close to a closer who cannot see the cards: its later plays chosen as
the expert would choose them, over worlds of what it knows, not per world.

Solving a closed deal in each sampled world values the close as if the closer knew the
opponent's hand from the second trick on: in every world it plays that world's best line.
`closer_values` plays the closed deal out in each world instead: the closer's first
action is the one with the best mean over all the worlds (as before), and each later
play of the closer is chosen by the mean of exact values over ``resample`` fresh worlds
of its information set at that point (what the opponent has played since included),
which is how the expert plays once the talon is closed. The opponent answers in each
world with its exact best play there (it is credited with seeing the closer's hand, so
the value errs towards caution). With ``resample=0`` every world is solved after the
first action: the old valuation.

Measured, not the agent's (docs/agents-strength.md, "The close valued by a closer who
cannot see"). Deterministic for its seed; no I/O, no clock.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..game.actions import DECLARE
from ..game.observation import observation
from ..game.state import OVER, State
from .endgame import Search, worth
from .worlds import InfoSet, Worlds

__all__ = ["closer_values"]


def closer_values(
    states: Sequence[State], me: int, util: Sequence[float], resample: int = 0, seed: int = 0
) -> tuple[int, list[float]]:
    """The closer's best first action and each world's utility for seat ``me`` (``util`` by
    game points -3..3) when it plays on as described above. ``states`` are worlds of one
    information set with ``me`` to act, just after the close."""
    return _Closer(me, util, resample, seed).choose(list(states), first=True)


class _Closer:
    """One valuation: the closer's seat, the utility, the fresh worlds' count and generator."""

    def __init__(self, me: int, util: Sequence[float], resample: int, seed: int):
        self.me = me
        self.util = util
        self.resample = resample
        self.rng = random.Random(seed)
        self.search = Search()

    def u(self, val: int) -> float:
        """The closer's utility of a deal result ``val`` (game points for seat 0)."""
        return worth(self.util, val, self.me)

    def solved(self, states: list[State]) -> list[float]:
        return [self.u(v) for v in map(self.search.value, states)]

    def choose(self, states: list[State], first: bool = False) -> tuple[int, list[float]]:
        """The closer to act in every state (worlds it cannot tell apart): its action and
        each state's utility. The first action is the best mean over the states; a later
        one is chosen over fresh worlds (`later`), or, with no resampling, every state is
        solved from here."""
        me = self.me
        st0 = states[0]
        acts = [a for a in st0.legal_actions() if a != DECLARE or st0.count(me) >= 66]
        if len(acts) == 1 and acts[0] == DECLARE:
            return -1, self.solved(states)
        if DECLARE in acts:
            return DECLARE, self.after(states, DECLARE)
        if not first:
            if not self.resample or len(acts) == 1:
                return -1, self.solved(states)
            a = self.later(st0, acts)
            return a, self.after(states, a)
        best_a, best_vals, best_mean = -1, [], -1e9
        for a in acts:
            vals = self.after(states, a)
            mean = sum(vals) / len(vals)
            if mean > best_mean + 1e-12:
                best_a, best_vals, best_mean = a, vals, mean
        return best_a, best_vals

    def after(self, states: list[State], a: int) -> list[float]:
        """Each state's utility after the closer plays ``a``: the opponent answers with its
        exact best play in each world; worlds where it played the same are one information
        set again, and the closer chooses once for them."""
        me = self.me
        out = [0.0] * len(states)
        groups: dict[tuple[int, ...], list[int]] = {}
        nxt: list[State] = []
        for i, s in enumerate(states):
            s = s.clone()
            s.apply_legal(a)
            seen: list[int] = []
            while s.phase != OVER and s.to_act != me:
                replies = self.search.action_values(s)
                b = min(replies, key=lambda r: self.u(r[1]))[0]
                s.apply_legal(b)
                seen.append(b)
            nxt.append(s)
            groups.setdefault(tuple(seen), []).append(i)
        for idx in groups.values():
            group = [nxt[i] for i in idx]
            vals = self.solved(group) if group[0].phase == OVER else self.choose(group)[1]
            for i, x in zip(idx, vals, strict=True):
                out[i] = x
        return out

    def later(self, st: State, acts: list[int]) -> int:
        """The closer's play at a later decision, as the expert plays once the talon is
        closed: the best mean of exact values over fresh worlds of its information set."""
        worlds = Worlds(InfoSet(observation(st, self.me), st.variant))
        sums = [0.0] * len(acts)
        for _ in range(self.resample):
            w = worlds.sample(self.rng)
            for j, (_, val) in enumerate(self.search.action_values(w, acts)):
                sums[j] += self.u(val)
        return acts[max(range(len(acts)), key=sums.__getitem__)]
