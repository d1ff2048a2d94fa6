"""The value of a close to the closer who cannot see the cards: its plays chosen once for
every world it cannot tell apart, not per world.

Solving a closed deal in each sampled world values the close as if the closer knew the
opponent's hand from the first trick on: in every world it plays that world's best line.
That flatters the close (docs/agents-strength.md, "The close's margin"): a real closer
plays one card for all the hands it cannot tell apart, and learns only what the
opponent's plays show. `closer_values` plays the closed deal over all the worlds at once:
at each of the closer's first ``depth`` decisions it picks the one action with the best
mean over the worlds that agree with everything it has seen (the cards the opponent has
played), and the opponent answers each world with its exact best play there (it is
credited with seeing the closer's hand: the value errs towards caution). After ``depth``
decisions each world is solved exactly as before. ``depth=1`` is the old valuation: the
best first lead on average, the rest seen.

Pure and deterministic: states in, values out.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..game.actions import DECLARE
from ..game.observation import observation
from ..game.state import OVER, State
from .endgame import Search
from .worlds import InfoSet, Worlds

__all__ = ["closer_values"]


def closer_values(
    states: Sequence[State], me: int, util: Sequence[float], depth: int, resample: int = 0, seed: int = 0
) -> tuple[int, list[float]]:
    """The closer's first action and each world's utility (``util`` by game points -3..3,
    for seat ``me``) when it plays its first ``depth`` decisions by the mean over the
    worlds it cannot tell apart. ``states`` are worlds of one information set with ``me``
    to act (just after the close)."""
    search = Search()
    if resample:
        _NESTED.update(k=resample, rng=random.Random(seed), variant=states[0].variant)
    else:
        _NESTED.clear()
    return _choose(list(states), me, util, depth, search)


_NESTED: dict = {}


def _pimc_choice(st: State, me: int, util: Sequence[float], acts: list[int], search: Search) -> int:
    """The closer's action at a later decision as the expert plays it: the best mean of
    exact values over fresh worlds of its information set there."""
    info = InfoSet(observation(st, me), _NESTED["variant"])
    worlds = Worlds(info)
    rng = _NESTED["rng"]
    sums = [0.0] * len(acts)
    for _ in range(_NESTED["k"]):
        w = worlds.sample(rng)
        for j, (_, val) in enumerate(search.action_values(w, acts)):
            sums[j] += _u(val, me, util)
    return acts[max(range(len(acts)), key=sums.__getitem__)]


def _u(val: int, me: int, util: Sequence[float]) -> float:
    return util[(val if me == 0 else -val) + 3]


def _choose(states: list[State], me: int, util: Sequence[float], depth: int, search: Search) -> tuple[int, list[float]]:
    """``me`` to act in every state (the same information set): the best action by the mean
    and each state's utility under it."""
    st0 = states[0]
    acts = [a for a in st0.legal_actions() if a != DECLARE or st0.count(me) >= 66]
    if len(acts) == 1 and acts[0] == DECLARE:
        return -1, [_u(search.value(s), me, util) for s in states]
    if DECLARE in acts:
        return DECLARE, _after(states, DECLARE, me, util, depth - 1, search)
    if depth <= 0:
        if not _NESTED or len(acts) == 1:
            return -1, [_u(search.value(s), me, util) for s in states]
        a = acts[0] if len(acts) == 1 else _pimc_choice(states[0], me, util, acts, search)
        return a, _after(states, a, me, util, 0, search)
    best_a, best_vals, best_mean = -1, [], -1e9
    for a in acts:
        vals = _after(states, a, me, util, depth - 1, search)
        mean = sum(vals) / len(vals)
        if mean > best_mean + 1e-12:
            best_a, best_vals, best_mean = a, vals, mean
    return best_a, best_vals


def _after(states: list[State], a: int, me: int, util: Sequence[float], depth: int, search: Search) -> list[float]:
    """Each state's utility after ``me`` plays ``a``: the opponent answers with its exact
    best play in each world; worlds where it did the same are one information set again."""
    out = [0.0] * len(states)
    groups: dict[tuple[int, ...], list[int]] = {}
    nxt: list[State] = []
    for i, s in enumerate(states):
        s = s.clone()
        s.apply_legal(a)
        seen: list[int] = []
        while s.phase != OVER and s.to_act != me:
            replies = search.action_values(s)
            b = min(replies, key=lambda r: _u(r[1], me, util))[0]
            s.apply_legal(b)
            seen.append(b)
        nxt.append(s)
        groups.setdefault(tuple(seen), []).append(i)
    for idx in groups.values():
        group = [nxt[i] for i in idx]
        if group[0].phase == OVER:
            vals = [_u(search.value(s), me, util) for s in group]
        else:
            _, vals = _choose(group, me, util, depth, search)
        for i, x in zip(idx, vals, strict=True):
            out[i] = x
    return out
