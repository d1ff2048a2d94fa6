"""`ExpertStrategy`, the reference searching player: perfect-information Monte Carlo over
sampled worlds, exact solving once the talon is closed or nearly gone, playouts before.

Two ways to size a decision (``budget``): ``"samples"`` does a fixed amount of work, so
play depends only on the seed and the position (the clock is a safety net); ``"time"`` is
anytime: it keeps adding worlds until a share of the move's allowance is spent or the
best action's lead is statistically settled. `OracleStrategy` is the same search on the
one true world, for measurement only.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..game.actions import CLOSE, DECLARE, EXCHANGE, MARRY, action_str, parse_action
from ..game.cards import cards_of
from ..game.observation import observation
from ..game.state import OVER, State
from ..game.variant import Variant, get_variant
from . import fast_playout
from .closed_play import closer_values
from .closer_model import CloserEvidence
from .endgame import Search, fast_ok, packed_value, solver_for, solver_of, worth
from .heuristic import close_by_rule
from .inference import history_likelihood, opponent_likelihood, value_lead_chance, value_lead_likelihood
from .ismcts import Tree
from .playout import (
    close_pays,
    lead_likelihood,
    may_close,
    modeled_policy,
    policy_action,
    result_value,
    seat_value,
)
from .worlds import Hidden, InfoSet, Worlds

__all__ = [
    "BUDGETS", "LEAD_MODELS", "OPEN_SEARCHES", "OPPONENT_CLOSES", "ExpertStrategy", "HandOracleStrategy",
    "OracleStrategy", "deal_utility", "settled",
]  # fmt: skip

#: How a decision is sized: a fixed number of worlds, or anytime within a time budget.
BUDGETS = ("samples", "time")
#: How the open phase is searched: playouts in each world, or an information-set tree.
OPEN_SEARCHES = ("pimc", "ismcts")
#: How the opponent closes in the playouts (``opponent_close``), by name: ``"seen"`` by the
#: policy's own test with every card seen (an omniscient closer; None here), ``"rule"`` by
#: the heuristic's rule from its own information, ``"either"`` / ``"both"`` when one of
#: them / both say so, ``"never"``; ``"adaptive"``: by the rule once this match's evidence
#: (`CloserEvidence`) makes it a player of the rule more likely than not, else ``"seen"``.
OPPONENT_CLOSES: dict[str, Callable[[State, int], bool] | None] = {
    "seen": None,
    "rule": close_by_rule,
    "either": lambda st, s: close_by_rule(st, s) or close_pays(st, s),
    "both": lambda st, s: close_by_rule(st, s) and close_pays(st, s),
    "never": lambda st, s: False,
    "adaptive": close_by_rule,
}
#: With ``opponent_close="adaptive"``: the rule is used once the match's evidence gives
#: it at least this chance (`CloserEvidence`); before, the opponent closes as if it saw.
ADAPT_AT = 0.5
#: Worlds that weigh one of the opponent's leads as evidence of how it closes.
EVIDENCE_WORLDS = 32
#: The temperature of the other hypothesis's leads: by value, loosely.
LOOSE = 8.0
#: Models of the opponent's open-phase lead that can weigh the worlds (``infer=True``), by
#: name: each gives a world's weight (see the ``lead_model`` attribute).
LEAD_MODELS: dict[str, Callable[[State], float]] = {
    "cheap": lead_likelihood,
    "value": value_lead_likelihood,
    "value+since": opponent_likelihood,
    "history": history_likelihood,
}

#: The lead models whose weight turns on the opponent's hand alone (see `Worlds`).
BY_HAND = ("cheap", "value")


#: How a won deal is scored, roughly (1, 2 or 3 game points), for the match model.
_DEAL_POINTS = ((1, 0.45), (2, 0.40), (3, 0.15))


def _match_win_table(target: int) -> list[list[float]]:
    """``W[a][b]``: the chance to win the match needing ``a`` more game points while the
    opponent needs ``b``, if every deal is a coin flip scored as `_DEAL_POINTS`."""
    w = [[0.0] * (target + 1) for _ in range(target + 1)]
    for a in range(target + 1):
        for b in range(target + 1):
            if a == 0:
                w[a][b] = 1.0
            elif b == 0:
                w[a][b] = 0.0
            else:
                w[a][b] = sum(0.5 * q * (w[max(0, a - g)][b] + w[a][max(0, b - g)]) for g, q in _DEAL_POINTS)
    return w


_TABLES: dict[int, list[list[float]]] = {}


def deal_utility(obs: dict[str, Any], target: int) -> list[float]:
    """The worth for ``obs["seat"]`` of each deal result -3..3 (index ``g + 3``), in game
    points of the match: the chance to win the match after the deal, rescaled so that
    winning the deal by 1 is worth +1 and losing it by 1 is worth -1. Winning by 3 is then
    worth no more than by 1 when 1 point wins the match, and so on."""
    if target not in _TABLES:
        _TABLES[target] = _match_win_table(target)
    w = _TABLES[target]
    me = obs["seat"]
    score = obs["score"]
    carry = obs.get("carry", 0)
    a = max(1, min(target, target - score[me]))
    b = max(1, min(target, target - score[me ^ 1]))
    raw = []
    for g in range(-3, 4):
        if g > 0:
            raw.append(w[max(0, a - g - carry)][b])
        elif g < 0:
            raw.append(w[a][max(0, b + g - carry)])
        else:
            raw.append(w[a][b])
    lo, hi = raw[2], raw[4]
    if hi - lo < 1e-12:
        return [float(g) for g in range(-3, 4)]
    return [2 * (x - lo) / (hi - lo) - 1 for x in raw]


def _decision_seed(seed: int, obs: dict[str, Any], legal: Sequence[str]) -> int:
    """A seed for one decision from the player's seed and the position (process-independent)."""
    text = json.dumps([seed, obs, list(legal)], sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _out_of_time(start: float, done: int, deadline: float) -> bool:
    """Whether one more iteration, as long as the slowest plausible one so far, would pass
    the deadline (the mean iteration time, with room to spare)."""
    now = time.perf_counter()
    return now + 1.5 * (now - start) / done > deadline


def settled(series: Sequence[Sequence[float]], z: float) -> bool:
    """Whether the best of several actions, valued in the same worlds (``series[j][i]``:
    action ``j`` in world ``i``), leads the runner-up by more than ``z`` standard errors
    of their paired difference. Actions equal in every world so far count as settled."""
    n = len(series[0])
    if len(series) < 2 or n < 2:
        return len(series) < 2
    means = [sum(v) / n for v in series]
    order = sorted(range(len(series)), key=means.__getitem__, reverse=True)
    b, r = series[order[0]], series[order[1]]
    lead = means[order[0]] - means[order[1]]
    var = sum((x - y - lead) ** 2 for x, y in zip(b, r, strict=True)) / (n - 1)
    return lead > z * math.sqrt(var / n) or var < 1e-18


class ExpertStrategy:
    """Determinized search: perfect-information Monte Carlo over sampled worlds.

    - One legal action: played at once. ``declare`` whenever the count is 66 or more,
      never falsely; always exchanges, shows the best marriage (40 first).
    - Talon closed or exhausted, or down to its last two cards: samples worlds (one when
      the opponent's hand is known) and solves each exactly for every candidate action
      (`solve_actions`), then plays the best average.
    - Open talon: every candidate is played out in each sampled world with
      `policy_action` for both seats (common worlds for all candidates), and closing is
      valued by solving the closed deal in each world; closing needs a clear edge
      (`CLOSE_MARGIN`).

    ``open_search="ismcts"`` searches the open phase with one information-set tree over
    the worlds instead (`_open_tree`, `arena.bots.ismcts`; measured level with the
    playouts against 2.2.0, and gaining from ten times the time what they gain, so not the
    agent's).

    ``budget="samples"`` (the default, and what ``arena selfplay`` plays): work is fixed
    per decision (``effort`` scales it), so play depends only on the seed and the
    position; the clock is a safety net: sampling stops once ``move_ms_fraction`` of
    min(move allowance, time left), less ``safety_ms``, has passed.

    ``budget="time"`` (the agent's): anytime. After the fixed counts above (stopped only
    by that safety net, so it never does less than the samples mode), worlds keep
    coming, up to ``MAX_WORLDS``, until ``time_fraction`` of min(move allowance, time
    left), less ``safety_ms``, is spent (the bank is never planned on), or the best
    action leads the runner-up by ``settle_z`` standard errors of their paired
    difference (`settled`). Given the same stopping point it plays as deterministically
    as the samples mode; where it stops depends on the clock.

    Call it as ``strategy(obs, legal)`` like any strategy, or ``strategy.choose(obs,
    legal, time_left_ms)`` to pass the request's clock. ``variant`` is the rule set (from
    ``hello``; three-sitout's deals are played by its two-handed `Variant.hand_variant`);
    by default the preset named in the observation. ``move_ms`` is the per-move
    allowance from ``hello``'s time control.
    """

    #: Worlds per decision at effort 1.0, sized to stay well inside 100 ms per move.
    STRICT_WORLDS = 32
    TALON2_WORLDS = 10
    PLAYOUT_WORLDS = 40
    CLOSE_WORLDS = 24
    #: With the talon open, closing needs this many game points over the best alternative,
    #: and a positive mean. (A negative margin gained on positions at fixed work and
    #: nothing at the agent's 100 ms: docs/agents-strength.md, "The close's margin".)
    CLOSE_MARGIN = 0.25
    #: With this many talon cards or fewer, every action is solved exactly in each world
    #: (4 measured no better than playouts there, at fixed work or at 100 ms a move:
    #: docs/agents-strength.md, "Exact search with four talon cards").
    EXACT_TALON = 2
    #: Value the close as a closer who cannot see the cards plays it (`closer_values`): each
    #: of its later plays chosen by this many fresh worlds of its information set there
    #: (0: every world solved as if seen after the first lead), over the first
    #: ``CLOSE_WORLDS`` worlds; with two talon cards left, the solved close is lowered by
    #: the shortfall those worlds show.
    CLOSE_RESAMPLE = 0
    #: The most worlds a time-budgeted decision samples (beyond this, more barely helps).
    MAX_WORLDS = 3000
    #: A time-budgeted decision checks whether it is settled every this many worlds.
    SETTLE_EVERY = 8
    #: The lookaheads a time-budgeted decision may search with (`deep_playouts`), by the
    #: deck's size, best first, as ``(level, width)``: two levels, or two pruned to the
    #: policy's card and the best other; in Sixty-Six first three levels pruned to two
    #: (measured better than two full levels at 1,000 ms there; in Schnapsen three levels,
    #: full or pruned, were level with two: docs/agents-strength.md). A deck not here: none.
    DEEP_SEARCHES: ClassVar[dict[int, tuple[tuple[int, int], ...]]] = {
        24: ((3, 2), (2, 0), (2, 2)),
        20: ((2, 0), (2, 2)),
    }

    def __init__(
        self,
        seed: int = 0,
        move_ms_fraction: float = 0.6,
        *,
        variant: Variant | str | None = None,
        move_ms: int | None = None,
        effort: float = 1.0,
        safety_ms: float = 8.0,
        budget: str = "samples",
        time_fraction: float = 0.4,
        settle_z: float = 3.0,
        infer: bool = False,
        lead_model: str = "cheap",
        opponent_close: str = "seen",
        open_search: str = "pimc",
    ):
        if lead_model not in LEAD_MODELS:
            raise ValueError(f"lead_model must be one of {', '.join(LEAD_MODELS)}, got {lead_model!r}")
        if opponent_close not in OPPONENT_CLOSES:
            raise ValueError(f"opponent_close must be one of {', '.join(OPPONENT_CLOSES)}, got {opponent_close!r}")
        if open_search not in OPEN_SEARCHES:
            raise ValueError(f"open_search must be one of {', '.join(OPEN_SEARCHES)}, got {open_search!r}")
        if budget not in BUDGETS:
            raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {budget!r}")
        self.seed = seed
        self.budget = budget
        self.time_fraction = time_fraction
        self.settle_z = settle_z
        self.move_ms_fraction = move_ms_fraction
        self.variant = get_variant(variant).hand_variant if variant is not None else None
        self.move_ms = move_ms
        self.effort = effort
        self.safety_ms = safety_ms
        #: The playout policy (both seats); it also breaks ties between equal values.
        self.policy: Callable[[State], int] = policy_action
        #: Finish playouts with the exact solver once the talon is closed or exhausted.
        self.solve_tail = False
        #: Play the open phase's playouts with lookahead at this level (0: none; 1 to 3,
        #: `fast_playout.lookahead_action`: each card chosen by playing every candidate out
        #: in the world, by the policy or by lookahead a level down), each level some ten
        #: times the cost of the one below, in every decision.
        self.lookahead = 0
        #: Lookahead at levels 2 and 3 looks at the policy's card and this many - 1 others,
        #: the best by the policy's playouts (0: every candidate; `fast_playout.lookahead_action`).
        self.lookahead_width = 0
        #: With a time budget: a decision plays its playouts with the first lookahead of
        #: `DEEP_SEARCHES` (for its deck) whose playouts its budget (`budget_ms`) affords
        #: this many of, by the kernel's measured cost (`fast_playout.deep_search`; None:
        #: never), where the C kernel models the rules (in Python it would cost a hundred
        #: times more).
        self.deep_playouts: float | None = None
        self._level = 0
        self._width = 0
        #: Draw worlds in proportion to how likely the opponent's lead on the table is in
        #: them (`lead_likelihood`), instead of uniformly.
        self.infer = infer
        #: The model of the opponent's lead that weighs the worlds: ``"cheap"`` (2.1.0:
        #: `lead_likelihood`, cheapest side card first), ``"value"`` (2.2.0:
        #: `value_lead_likelihood`, the lead with the best expected return, marriages shown
        #: and exchanges taken) or ``"value+since"`` (`opponent_likelihood`, which also
        #: weighs our own leads' worlds by what the opponent did not do on its last lead;
        #: measured level with ``"value"``, so not the agent's).
        self.lead_model = lead_model
        #: How the opponent closes in the playouts, a name in `OPPONENT_CLOSES`: ``"seen"``
        #: (2.2.0: as if it saw every card) or a model of closing from its own information;
        #: ``"rule"`` gains against the heuristic and loses against 2.2.0; ``"adaptive"`` keeps
        #: part of the gain and is level with 2.2.0 within the noise: not proven better, so
        #: neither is the agent's.
        self.opponent_close = opponent_close
        #: How this seat closes in its own playouts, a name in `OPPONENT_CLOSES` (not
        #: ``"adaptive"``): ``"seen"`` (the policy's test with every card seen) or a model
        #: that decides from the seat's own information.
        self.own_close = "seen"
        #: With ``"adaptive"``: what this match has shown of how the opponent closes.
        self.closer = None
        if opponent_close == "adaptive":
            self.closer = CloserEvidence(
                close_by_rule, lead_chance=value_lead_chance, loose_lead_chance=lambda w: value_lead_chance(w, LOOSE)
            )
        #: Value deal results by the chance to win the match they give (`deal_utility`).
        self.match_aware = True
        #: How the open phase is searched, a name in `OPEN_SEARCHES`: ``"pimc"`` (playouts
        #: of every candidate in each world) or ``"ismcts"`` (one tree over the worlds,
        #: `arena.bots.ismcts`).
        self.open_search = open_search
        #: The tree's exploration constant (values are in game points of the match).
        self.ucb_c = 1.0
        self._util: list[float] = [float(g) for g in range(-3, 4)]
        #: What the last decision did: ``kind``, ``samples``, ``ms``, ``budget_ms`` (for
        #: logs and tests).
        self.last: dict[str, Any] = {}

    def __call__(self, obs: dict[str, Any], legal: Sequence[str]) -> str:
        return self.choose(obs, legal)

    def _n(self, base: int) -> int:
        return max(1, round(base * self.effort))

    def _cap(self, base: int) -> int:
        """The most worlds for a decision whose fixed count is ``base``."""
        return max(base, self.MAX_WORLDS) if self.budget == "time" else base

    def budget_ms(self, time_left_ms: float | None = None, *, hard: bool = False) -> float:
        """The time this decision may spend searching, in ms: in the time mode, on worlds
        beyond the fixed counts; ``hard``, or in the samples mode, the safety net that
        stops even the fixed counts (see the class docstring)."""
        allow = [x for x in (self.move_ms, time_left_ms) if x is not None]
        allowance = min(allow) if allow else 1000.0
        share = self.move_ms_fraction if hard or self.budget == "samples" else self.time_fraction
        return max(3.0, share * allowance - self.safety_ms)

    def _worlds(self, info: InfoSet, obs: dict[str, Any]) -> Worlds:
        """Where this decision's worlds come from (the oracle overrides it)."""
        if not self.infer:
            return Worlds(info)
        return Worlds(info, LEAD_MODELS[self.lead_model], by_hand=self.lead_model in BY_HAND)

    def choose(self, obs: dict[str, Any], legal: Sequence[str], time_left_ms: float | None = None) -> str:
        t0 = time.perf_counter()
        if self.closer is not None and obs["phase"] == "follow":
            self._weigh_lead(obs, legal)
        if len(legal) == 1:
            self.last = {"kind": "forced", "samples": 0, "ms": 0.0}
            return legal[0]
        budget_ms = self.budget_ms(time_left_ms)
        hard_ms = max(budget_ms, self.budget_ms(time_left_ms, hard=True))
        # The fixed counts stop only at the safety net (so the time mode never does less
        # than the samples mode); extra worlds stop at the budget.
        deadline = (t0 + hard_ms / 1000, t0 + budget_ms / 1000)
        v = self.variant or get_variant(obs["variant"])
        rng = random.Random(_decision_seed(self.seed, obs, legal))
        acts = [parse_action(a) for a in legal]
        self.last = {"kind": "?", "samples": 0, "budget_ms": budget_ms}
        self._level, self._width = self.lookahead, self.lookahead_width
        if self.deep_playouts is not None and self.budget == "time":
            searches = self.DEEP_SEARCHES.get(v.deck, ())
            level, width = fast_playout.deep_search(v, budget_ms, self.deep_playouts, searches)
            if level > self._level:
                self._level, self._width = level, width
        self.last["level"], self.last["width"] = self._level, self._width
        a = self._decide(obs, acts, v, rng, deadline)
        self.last["ms"] = (time.perf_counter() - t0) * 1000
        return action_str(a)

    def _weigh_lead(self, obs: dict[str, Any], legal: Sequence[str]) -> None:
        """Add the opponent's lead on the table to the evidence of how it closes."""
        v = self.variant or get_variant(obs["variant"])
        if v.players != 2 or obs.get("current_trick") is None or obs["talon_size"] == 0:
            return
        worlds = Worlds(InfoSet(obs, v))  # uniform: the lead's chance weighs them in the evidence
        rng = random.Random(_decision_seed(self.seed ^ 0xC105E, obs, legal))
        assert self.closer is not None
        self.closer.observe(lambda: worlds.sample(rng), EVIDENCE_WORLDS)

    # -- the decision procedure -------------------------------------------------------------
    def _decide(
        self, obs: dict[str, Any], acts: list[int], v: Variant, rng: random.Random, deadline: tuple[float, float]
    ) -> int:
        me = obs["seat"]
        if DECLARE in acts:
            if obs["points"][me] >= 66:
                self.last["kind"] = "declare"
                return DECLARE
            acts = [a for a in acts if a != DECLARE]
        if len(acts) == 1:
            self.last["kind"] = "forced"
            return acts[0]
        if obs["phase"] == "close-offer":
            self.last["kind"] = "rule"
            return EXCHANGE if EXCHANGE in acts else acts[0]
        info = InfoSet(obs, v)
        worlds = self._worlds(info, obs)
        self._util = deal_utility(obs, v.target) if self.match_aware else [float(g) for g in range(-3, 4)]
        if info.strict:
            n = 1 if info.determined or worlds.fixed else self._n(self.STRICT_WORLDS)
            self.last["kind"] = "solve"
            return self._pimc_exact(worlds, acts, n, rng, deadline)
        if EXCHANGE in acts:
            self.last["kind"] = "rule"
            return EXCHANGE
        marriages = [a for a in acts if MARRY <= a < EXCHANGE]
        if marriages:
            self.last["kind"] = "rule"
            trump = MARRY + info.trump
            return trump if trump in marriages else marriages[0]
        if info.talon_size <= self.EXACT_TALON:
            self.last["kind"] = "solve-talon2"
            n = 1 if worlds.fixed else self._n(self.TALON2_WORLDS)
            return self._pimc_exact(worlds, acts, n, rng, deadline)
        self.last["kind"] = "playouts"
        if self.open_search == "ismcts":
            return self._open_tree(worlds, acts, rng, deadline)
        return self._open(worlds, acts, rng, deadline)

    def _pick(self, acts: list[int], means: list[float], world: State) -> int:
        best = max(means)
        tied = [a for a, m in zip(acts, means, strict=True) if m >= best - 1e-9]
        if len(tied) == 1:
            return tied[0]
        pref = self.policy(world)
        return pref if pref in tied else tied[0]

    def _pimc_exact(
        self, worlds: Worlds, acts: list[int], n: int, rng: random.Random, deadline: tuple[float, float]
    ) -> int:
        """Solve each sampled world exactly for every action; the best mean utility.
        ``n`` worlds at least (time permitting); with a time budget, more until settled."""
        me = worlds.info.seat
        util = self._util
        series: list[list[float]] = [[] for _ in acts]
        first = None
        done = 0
        cap = n if n == 1 else self._cap(n)
        resample = self.CLOSE_RESAMPLE and CLOSE in acts and n > 1
        kept: list[State] = []
        start = time.perf_counter()
        for i in range(cap):
            if i and _out_of_time(start, i, deadline[i >= n]):
                break
            if i >= n and i % self.SETTLE_EVERY == 0 and settled(series, self.settle_z):
                break
            w = worlds.sample(rng)
            if first is None:
                first = w
            if resample and len(kept) < self.CLOSE_WORLDS:
                kept.append(w)
            for j, (_, val) in enumerate(Search().action_values(w, acts)):
                series[j].append(worth(util, val, me))
            done += 1
        self.last["samples"] = done
        means = [sum(v) / done for v in series]
        if kept:  # the close as a closer who cannot see plays it: its shortfall, world by world
            states = [w.clone() for w in kept]
            for st in states:
                st.apply_legal(CLOSE)
            if all(st.to_act == me for st in states):
                j = acts.index(CLOSE)
                _, vals = closer_values(states, me, util, self.CLOSE_RESAMPLE, rng.getrandbits(32))
                means[j] -= sum(series[j][: len(vals)]) / len(vals) - sum(vals) / len(vals)
        if CLOSE in acts:
            self.last["close_value"] = means[acts.index(CLOSE)]
        return self._pick(acts, means, first)

    def _playout_value(self, st: State, me: int, policy: Callable[[State], int]) -> float:
        """The value for ``me`` of playing ``st`` out: by ``policy`` while the talon is
        open, then (with ``solve_tail``) exactly."""
        util = self._util
        if self._level and policy is policy_action and st.phase != OVER:
            winner, g, c0, c1 = fast_playout.play_out_lookahead(st, self._level, self._width)
            return result_value(winner, g, (c0, c1), me, util)
        if policy is policy_action and fast_playout.USE_C and st.phase != OVER:
            # The same playout in C (`arena/bots/_cplayout.c`; in Python where it is not built
            # or does not model the rules), then `seat_value` of the deal's end or the solve.
            if self.solve_tail:
                out = fast_playout.run_open(st)
                if out[0] == 1:  # (1, the position's facts..., closer, ct0, ct1, cp0, cp1)
                    solver = solver_of(st.variant, st.trump, out[13], out[14:16], out[16:18])
                    return worth(util, packed_value(solver, *out[1:13]), me)
                winner, g, c0, c1 = out[1:]
            else:
                winner, g, c0, c1 = fast_playout.play_out(st)
            return result_value(winner, g, (c0, c1), me, util)
        apply = st.apply_legal
        if self.solve_tail:
            while st.phase != OVER and not fast_ok(st):
                apply(policy(st))
            if st.phase != OVER:
                val = solver_for(st).value(st)
                return worth(util, val, me)
        else:
            while st.phase != OVER:
                apply(policy(st))
        return seat_value(st, me, util)

    def _open_counts(self, worlds: Worlds, can_close: bool) -> tuple[int, int, int]:
        """An open-phase decision's size: its fixed count of worlds, how many of them value
        the close (every one with a time budget), and the most it may use."""
        n = 1 if worlds.fixed else self._n(self.PLAYOUT_WORLDS)
        cap = n if n == 1 else self._cap(n)
        if not can_close:
            return n, 0, cap
        if self.budget == "time":
            return n, cap, cap
        return n, 1 if worlds.fixed else self._n(self.CLOSE_WORLDS), cap

    def _open(self, worlds: Worlds, acts: list[int], rng: random.Random, deadline: tuple[float, float]) -> int:
        """Open talon: playouts for every candidate in common sampled worlds; closing is
        valued by solving the closed deal exactly (the best first lead on average)."""
        me = worlds.info.seat
        util = self._util
        cands = [a for a in acts if a != CLOSE]
        n, n_close, cap = self._open_counts(worlds, CLOSE in acts)
        timed = self.budget == "time"
        rule = OPPONENT_CLOSES[self.opponent_close]
        if self.closer is not None and self.closer.p_rule < ADAPT_AT:
            rule = None
        if self.own_close not in OPPONENT_CLOSES or self.own_close == "adaptive":
            raise ValueError(f"own_close must be one of seen, rule, either, both, never, got {self.own_close!r}")
        own = OPPONENT_CLOSES[self.own_close]
        policy = self.policy if rule is None and own is None else modeled_policy(me, rule, own)
        series: list[list[float]] = [[] for _ in cands]
        sums = [0.0] * len(cands)
        close_vals: dict[int, list[float]] = {}  # each first lead's value per world (for `settled`)
        close_sums: dict[int, float] = {}  # ... and its running sum
        close_done = 0
        close_dropped = False
        close_states: list[State] = []
        first = None
        done = 0
        start = time.perf_counter()
        for i in range(cap):
            if i and _out_of_time(start, i, deadline[i >= n]):
                break
            if i >= n and i % self.SETTLE_EVERY == 0:
                trial = series
                if close_vals and not close_dropped:  # the close, at its best first lead, less its margin
                    lead = close_vals[max(close_sums, key=close_sums.__getitem__)]
                    trial = [*series, [x - self.CLOSE_MARGIN for x in lead]]
                if settled(trial, self.settle_z):
                    break
            w = worlds.sample(rng)
            if first is None:
                first = w
            for j, a in enumerate(cands):
                st = w.clone()
                st.apply_legal(a)
                x = self._playout_value(st, me, policy)
                series[j].append(x)
                sums[j] += x
            if not close_dropped and _close_trails(close_sums, close_done, max(sums) / (i + 1)):
                close_dropped = timed  # in the samples mode it may come back, as it always did
            elif close_done < n_close and not close_dropped:
                st, vals = _solve_close(w, me)
                if st.to_act == me and self.CLOSE_RESAMPLE and len(close_states) < self.CLOSE_WORLDS:
                    close_states.append(st)
                for a, val in vals:
                    x = worth(util, val, me)
                    close_vals.setdefault(a, []).append(x)
                    close_sums[a] = close_sums.get(a, 0.0) + x
                close_done += 1
            done += 1
        self.last["samples"] = done
        means = [s / done for s in sums]
        if close_done:
            close_value = max(close_sums.values()) / close_done
            if close_states and not close_dropped:
                seed = rng.getrandbits(32)
                _, vals = closer_values(close_states, me, util, self.CLOSE_RESAMPLE, seed)
                close_value = sum(vals) / len(vals)
            if self._closes(close_value, max(means)):
                return CLOSE
        return self._pick(cands, means, first)

    def _open_tree(self, worlds: Worlds, acts: list[int], rng: random.Random, deadline: tuple[float, float]) -> int:
        """Open talon by information-set tree search (`Tree`): rounds of one iteration per
        candidate, each on a fresh world, as many rounds as `_open` has worlds (more, with a
        time budget, until it is spent or no round left in it can change the choice,
        `Tree.decided`, once the close is out of play); the close valued as `_open` values
        it; the root's most visited candidate is played."""
        me = worlds.info.seat
        util = self._util
        cands = [a for a in acts if a != CLOSE]
        n, n_close, cap = self._open_counts(worlds, CLOSE in acts)
        timed = self.budget == "time"
        policy = self.policy
        tree = Tree(me, lambda st: self._playout_value(st, me, policy), policy, may_close, self.ucb_c)
        close_sums: dict[int, float] = {}
        close_done = 0
        close_dropped = False
        k = len(cands)
        done = 0
        start = time.perf_counter()
        for i in range(cap):  # a round: one iteration per candidate, the close solved in its first world
            if i and _out_of_time(start, i, deadline[i >= n]):
                break
            if timed and i >= n and i % self.SETTLE_EVERY == 0 and (close_done >= n_close or close_dropped):
                now = time.perf_counter()  # settled: no round left in the budget can change the choice
                rounds_left = min(cap - i, (deadline[1] - now) / max((now - start) / i, 1e-9))
                if tree.decided(cands, rounds_left * k):
                    break
            for j in range(k):
                w = worlds.sample(rng)
                if j == 0 and close_done < n_close and not close_dropped:
                    best_other = max(m for _a, _n, m in tree.root_values(cands))  # -inf before any visit
                    if _close_trails(close_sums, close_done, best_other):
                        close_dropped = timed  # in the samples mode it may come back, as in `_open`
                    else:
                        for a, val in _solve_close(w, me)[1]:
                            close_sums[a] = close_sums.get(a, 0.0) + worth(util, val, me)
                        close_done += 1
                tree.iterate(w, cands, rng)
            done += 1
        self.last["samples"] = done
        vals = tree.root_values(cands)
        best = max(vals, key=lambda t: (t[1], t[2]))
        if close_done and self._closes(max(close_sums.values()) / close_done, max(m for _a, _n, m in vals)):
            return CLOSE
        return best[0]

    def _closes(self, close_value: float, best_other: float) -> bool:
        """Whether to close with the talon open: the close's value is a win and beats the
        best other action by `CLOSE_MARGIN` (both kept in ``last``)."""
        self.last["close_value"] = close_value
        self.last["best_other"] = best_other
        return close_value > self._util[3] and close_value >= best_other + self.CLOSE_MARGIN


def _close_trails(close_sums: dict[int, float], close_done: int, best_other: float) -> bool:
    """Whether the close, at its best first lead over the ``close_done`` worlds valued so
    far, clearly trails the best other action (by half a game point, after six worlds):
    then it is no longer worth solving."""
    return close_done >= 6 and max(close_sums.values()) / close_done < best_other - 0.5


def _solve_close(world: State, me: int) -> tuple[State, list[tuple[int, int]]]:
    """``world`` closed by ``me`` (a clone), and the closed deal's exact value after each of
    its first actions; (-1, value) when the opponent acts at once (an exchange offer)."""
    st = world.clone()
    st.apply_legal(CLOSE)
    if st.to_act != me:
        return st, [(-1, Search().value(st))]
    nxt = [a for a in st.legal_actions() if a != DECLARE or st.count(me) >= 66]
    return st, Search().action_values(st, nxt)


class _TrueWorld:
    """The one world an oracle searches: the real state (cloned per use)."""

    fixed = True

    def __init__(self, info: InfoSet, state: State):
        self.info = info
        self.state = state

    def sample(self, rng: random.Random) -> State:
        return self.state.clone()


class _HandWorlds:
    """Worlds with the opponent's true hand and the face-down talon shuffled."""

    fixed = False

    def __init__(self, info: InfoSet, state: State):
        self.info = info
        self.worlds = Worlds(info)
        self.opp_hand = state.hand[info.opp]
        self.talon = list(cards_of(info.pool & ~self.opp_hand))  # the face-down cards, in no order

    def sample(self, rng: random.Random) -> State:
        rest = self.talon[:]
        rng.shuffle(rest)
        return self.worlds.make(Hidden(self.opp_hand, tuple(rest[: self.info.n_down])))


class OracleStrategy(ExpertStrategy):
    """The expert's search on the true world: every hidden card and the talon's order
    known. For measurement only (how much of the perfect-information edge a player
    captures): the in-process referee of ``arena selfplay`` (`arena.play.selfplay.play_match`)
    hands it the true state before each decision (``sees_state``); anywhere else it has
    none and refuses to play (`RuntimeError`), so no agent process can be one. One world,
    so one playout or one exact solve per candidate."""

    #: Asks the in-process referee for the true state (set as `state` before a decision).
    sees_state = True
    state: State | None = None

    def _true_state(self, obs: dict[str, Any]) -> State:
        """The referee's state behind ``obs``, or `RuntimeError` if it was not handed one."""
        state = self.state
        if state is None or observation(state, obs["seat"]) != obs:
            raise RuntimeError("the oracle needs the referee's state: it plays only in-process (arena selfplay)")
        return state

    def _worlds(self, info: InfoSet, obs: dict[str, Any]) -> Worlds:
        return _TrueWorld(info, self._true_state(obs))  # type: ignore[return-value]


class HandOracleStrategy(OracleStrategy):
    """The expert's search shown the opponent's hand but not the talon's order: its worlds
    are the true hands with the face-down talon shuffled. For measurement only, as the
    oracle: how much the hand alone is worth to the search, the most any inference about
    it could buy (docs/agents-strength.md, "The oracle gap")."""

    def _worlds(self, info: InfoSet, obs: dict[str, Any]) -> Worlds:
        return _HandWorlds(info, self._true_state(obs))  # type: ignore[return-value]
