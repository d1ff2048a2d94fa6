"""Information-set Monte Carlo tree search for the open phase (single observer).

Each iteration draws one world of the searching seat's information set (weighted, as the
expert's worlds are), walks a tree shared by every world from the searching seat's point
of view, choosing at each decision among the actions legal in that world by UCB with
availability counts, adds one node, and plays the rest out with the playout policy. A
node's children are keyed by the action and by the card the searching seat drew after
it (what it will have seen), nothing else. So its own choices are one per thing it can
tell apart, not one per world (the tree does not fuse strategies across worlds as
determinized search does), and the opponent's choice in the tree turns on the world only
through which of its cards the world makes legal: it is not chosen knowing the searching
seat's hand. Pure: no clocks, no I/O; the caller says how many iterations to run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from ..game.actions import CLOSE, DECLARE, DRAW, EXCHANGE, MARRY
from ..game.state import CLOSE_OFFER, DRAW_PENDING, OVER, State

__all__ = ["Tree", "tree_actions"]


def tree_actions(st: State, may_close: Callable[[State, int], bool]) -> list[int]:
    """The actions the tree weighs for the seat to act: claims 66 when true, always
    exchanges and shows marriages (40 first), as the expert does; closes only where
    ``may_close(state, seat)`` says it is worth asking."""
    s = st.to_act
    acts = st.legal_actions()
    if DECLARE in acts:
        if st.count(s) >= 66:
            return [DECLARE]
        acts.remove(DECLARE)
    if st.phase == CLOSE_OFFER:
        return [EXCHANGE]
    if EXCHANGE in acts:
        return [EXCHANGE]
    marriages = [a for a in acts if MARRY <= a < EXCHANGE]
    if marriages:
        trump = MARRY + st.trump
        return [trump if trump in marriages else marriages[0]]
    if CLOSE in acts and not may_close(st, s):
        acts.remove(CLOSE)
    return acts


class _Node:
    __slots__ = ("kids", "stats")

    def __init__(self) -> None:
        #: action -> [visits, total value for the seat that chose it, availability]
        self.stats: dict[int, list[float]] = {}
        #: (action, card bits the searching seat drew after it) -> node
        self.kids: dict[tuple[int, int], _Node] = {}


class Tree:
    """One decision's search tree; `iterate` adds one world's worth of evidence."""

    def __init__(
        self,
        me: int,
        playout: Callable[[State], float],
        policy: Callable[[State], int],
        may_close: Callable[[State, int], bool],
        c: float = 1.0,
    ):
        self.me = me
        self.playout = playout
        self.policy = policy
        self.may_close = may_close
        self.c = c
        self.root = _Node()

    def iterate(self, world: State, root_acts: list[int], rng: random.Random) -> None:
        """One iteration in ``world`` (consumed): select, expand one node, play out, back up.
        ``root_acts`` are the candidates at the root (the caller's, closes excluded)."""
        st = world
        me = self.me
        node = self.root
        path: list[tuple[_Node, int, int]] = []  # (node, action, seat that chose it)
        expanded = False
        while st.phase != OVER and not st.strict:
            s = st.to_act
            acts = root_acts if node is self.root else tree_actions(st, self.may_close)
            stats = node.stats
            for a in acts:
                x = stats.get(a)
                if x is None:
                    stats[a] = [0.0, 0.0, 1.0]
                else:
                    x[2] += 1
            fresh = [a for a in acts if stats[a][0] == 0]
            if fresh:
                pref = self.policy(st) if len(fresh) > 1 else fresh[0]
                a = pref if pref in fresh else rng.choice(fresh)
                expanded = True
            else:
                a = self._ucb(stats, acts)
            before = st.hand[me]
            st.apply_legal(a)
            while st.phase == DRAW_PENDING and not _open_choice(st, self.may_close):
                st.apply_legal(DRAW)
            path.append((node, a, s))
            if expanded:
                break
            key = (a, st.hand[me] & ~before)
            nxt = node.kids.get(key)
            if nxt is None:
                nxt = node.kids[key] = _Node()
            node = nxt
        value = self.playout(st)
        for nd, a, s in path:
            x = nd.stats[a]
            x[0] += 1
            x[1] += value if s == me else -value

    def _ucb(self, stats: dict[int, list[float]], acts: list[int]) -> int:
        c = self.c
        best, best_u = acts[0], -math.inf
        for a in acts:
            n, w, avail = stats[a]
            u = w / n + c * math.sqrt(math.log(avail) / n)
            if u > best_u:
                best, best_u = a, u
        return best

    def decided(self, acts: list[int], left: float) -> bool:
        """Whether the most visited root candidate (the one played) stays so whatever
        ``left`` more iterations do: its lead in visits over the runner-up exceeds them."""
        visits = sorted((self.root.stats.get(a, (0.0,))[0] for a in acts), reverse=True)
        return len(visits) < 2 or visits[0] - visits[1] > left

    def root_values(self, acts: list[int]) -> list[tuple[int, float, float]]:
        """(action, visits, mean value) for each root candidate."""
        out = []
        for a in acts:
            n, w, _ = self.root.stats.get(a, [0.0, 0.0, 0.0])
            out.append((a, n, w / n if n else -math.inf))
        return out


def _open_choice(st: State, may_close: Callable[[State, int], bool]) -> bool:
    """Whether the seat about to draw has a choice worth a node (closing, or claiming)."""
    s = st.to_act
    return (st.count(s) >= 66 and bool(st.tricks[s])) or may_close(st, s)
