"""Determinized search for agents: worlds from an observation, an exact endgame solver,
fast playouts, and `ExpertStrategy`, the reference searching player.

An observation (`arena.game.observation`) is a seat's information set. A *world* is a full
engine `State` consistent with it: the seat's own hand and every public fact as they are,
the opponent's unseen cards and the order of the face-down talon filled in.

- `state_from_observation(obs, variant, hidden)` builds the world for one assignment of
  the hidden cards (`Hidden`: the opponent's whole hand and the face-down talon, top
  first); `hidden_of(state, seat)` reads the true assignment off a real state.
- `sample_worlds(obs, variant, n, rng)` draws worlds uniformly among the assignments
  consistent with what the seat knows: the opponent's hand size, the cards known to be in
  it, the cards played, and what the strict phase's follow rules reveal (a player who
  did not follow suit is void in it; one who did not trump when void holds no trump; one
  who played a lower card of the led suit holds no higher one).
- `solve(state, seat)` is exact alpha-beta with a transposition table on a state whose
  hidden cards are all placed, from the moment the talon is closed or exhausted (or down
  to its last two cards): the value in game points for ``seat`` and the best action.
  `minimax(state, seat)` is the brute-force reference it must agree with.
- `ExpertStrategy` plays by perfect-information Monte Carlo: exact solving of sampled
  worlds once the talon is closed or nearly gone, playouts with a cheap policy before.

Everything here is deterministic given its inputs and the `random.Random` passed in.
Strategies read the clock only as a safety net (see `ExpertStrategy`).

The pieces live in `arena.bots.worlds`, `arena.bots.endgame`, `arena.bots.playout` and
`arena.bots.expert`; this module gathers their public names in one import."""

from __future__ import annotations

from .endgame import minimax, solve, solve_actions
from .expert import ExpertStrategy, deal_utility
from .playout import playout, policy_action
from .worlds import Hidden, InfoSet, hidden_of, sample_worlds, state_from_observation

__all__ = [
    "ExpertStrategy",
    "Hidden",
    "InfoSet",
    "deal_utility",
    "hidden_of",
    "minimax",
    "playout",
    "policy_action",
    "sample_worlds",
    "solve",
    "solve_actions",
    "state_from_observation",
]
