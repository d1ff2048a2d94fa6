"""A persistent ladder: submitted agents, rounds of duplicate pairs, ratings over time.

A ladder is a folder, private to the user who made it (mode 0700, so no sandboxed
agent can read it)::

    ladder.toml      its settings (see `LadderConfig`)
    ladder.sqlite    its store (`arena.ladder.store`): entries, planned pairs, matches,
                     deals, rating history
    agents/          immutable copies of the submitted agents, name/version-hash/
    logs/            the agents' stderr logs

``arena ladder run`` plays rounds. Each round reads the active entries afresh (so a
submission joins at the next round), fits the ratings to every match so far, and plans
``round_pairs`` duplicate pairs with `choose_pairs` (in a three- or four-handed game:
tables, each for one deck set in every seating, with `choose_tables`; see below), for the
information their results would bring about the ranking: the gaps between neighbours in the current order, each
weighted by how much its order is still in doubt. The round is planned greedily (each
pick counted as played before the next), with a share of the picks for the agents with
the fewest games (new entries first), and never a pairing across a settled gap (random
against the rest) while another is open. In simulation (bench/ladder_schedule.py) it
ranks eight agents better than a round robin of the same cost. The pairs are written
before they are played, and each match is written atomically when it ends, so a run
killed at any point (SIGKILL included) resumes with the open pairs, under the same match
ids and seeds: nothing lost, nothing counted twice. After a round each agent's rating is
appended to the history.

**Tables.** A ladder of a three- or four-handed game (three-pagat, four-pagat, ...) plans
tables instead of pairs: three or four distinct active entries, chosen by `choose_tables`
with the same measure of information, each played for one deck set in every seating of
`arena.tournament.seating.seatings` (three rotations; six games for partnerships: each
split into two teams, both ways round), all games of the set on one deck: the seed is
``derive_seed(root, "table", *agents, k)`` (agents sorted, ``k`` the table's set number in
the ladder), the rule of a table tournament's schedule. Its ratings are the team model's
(four-handed) or Plackett-Luce's (three-handed) fit, `arena.stats.table_rating`, to the
store's results (`TableResults.of_store`, as `arena ratings` reads them).

Ladders play submitted, untrusted code, so their root seed is always secret: a secret of
128 bits drawn at ``arena ladder init`` and kept in the store (`arena.tournament.secret`). A
``seed`` in ``ladder.toml`` is mixed with it (`root_seed`), never used alone.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import random
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError, read_toml
from ..game import Variant, VariantError, derive_seed
from ..protocol.codec import TimeControl
from ..runtime.agents import Manifest, load_manifest
from ..runtime.sandbox import Policy, private
from ..stats.rating import Ratings, expected_score, fit, normal_cdf, order_z
from ..stats.table_rating import TableResults, fit_table_counts
from ..tournament.schedule import MatchSpec, identity_hash
from ..tournament.seating import seatings
from ..tournament.secret import ladder_root, new_secret
from .store import LadderStore

CONFIG = "ladder.toml"
STORE = "ladder.sqlite"
FIELDS = ("name", "seed", "variant", "time_control", "concurrency", "round_pairs", "sandbox", "submit")
SUBMIT_FIELDS = ("max_mb", "max_files", "build_timeout_s", "check")
#: The Elo scale's logistic slope: P(win) = 1 / (1 + exp(-C * diff)).
C = math.log(10) / 400


@dataclasses.dataclass(frozen=True)
class SubmitRules:
    """What `arena submit` accepts into this ladder."""

    max_mb: int = 50  # the folder's size, build outputs left out
    max_files: int = 2000
    build_timeout_s: int = 300
    check: bool = True  # run the conformance suite before accepting


@dataclasses.dataclass(frozen=True)
class LadderConfig:
    """A ladder's settings, from ``ladder.toml``."""

    folder: Path
    name: str = "ladder"
    seed: int | None = None  # optional; mixed with the store's secret, never used alone
    variant: Variant = dataclasses.field(default_factory=lambda: Variant.from_dict({"base": "sixty-six"}))
    time_control: TimeControl = TimeControl()
    concurrency: int = dataclasses.field(default_factory=lambda: max(2, os.cpu_count() or 2))
    round_pairs: int = 0  # pairs (at tables: deck sets) per round; 0: about four pairs' matches per match in flight
    sandbox: Policy = Policy()
    submit: SubmitRules = SubmitRules()

    @property
    def store_path(self) -> Path:
        return self.folder / STORE

    @property
    def agents_dir(self) -> Path:
        return self.folder / "agents"

    @property
    def logs_dir(self) -> Path:
        return self.folder / "logs"

    @property
    def players(self) -> int:
        """Seats at a match: 2 (pairs), or 3 or 4 (tables)."""
        return self.variant.players

    @property
    def games_per_set(self) -> int:
        """Matches of one planned pair (2) or table (one deck set in every seating)."""
        return 2 if self.players == 2 else len(seatings(range(self.players)))

    @property
    def pairs_per_round(self) -> int:
        """Pairs (at tables: deck sets of a table) planned a round."""
        # Enough that the round's tail (its last matches, with slots idle) is short, few
        # enough that the ratings steer the schedule often: about 8 matches per match in
        # flight, whatever the game.
        return self.round_pairs or max(2 if self.players > 2 else 4, -(-8 * self.concurrency // self.games_per_set))

    def identity(self) -> dict[str, Any]:
        """What the ladder's results depend on (stored, checked on every open)."""
        return {
            "format": "ladder",
            "name": self.name,
            "seed": self.seed,
            "variant": self.variant.to_dict(),
            "time_control": self.time_control.to_dict(),
        }

    @property
    def config_hash(self) -> str:
        return identity_hash(self.identity())

    def to_toml(self) -> str:
        tc = self.time_control.to_dict()
        seed = (
            f"seed = {self.seed}  # mixed with the secret kept in the store, never used alone"
            if self.seed is not None
            else "# seed = 0  # optional: mixed with the secret kept in the store, never used alone"
        )
        lines = [
            f"name = {json.dumps(self.name)}",
            seed,
            f"variant = {json.dumps(self.variant.name)}",
            f"concurrency = {self.concurrency}",
            f"round_pairs = {self.round_pairs}  # duplicate pairs (at tables: deck sets) per scheduling round; "
            "0: about eight matches per match in flight",
            "",
            "[time_control]",
            *(f"{k} = {json.dumps(v)}" for k, v in tc.items()),
            "",
            "[sandbox]  # limits of every agent process; arena sandbox-info shows what is active",
            *(f"{k} = {json.dumps(v)}" for k, v in self.sandbox.to_dict().items()),
            "",
            "[submit]  # what arena submit accepts",
            *(f"{k} = {json.dumps(getattr(self.submit, k))}" for k in SUBMIT_FIELDS),
        ]
        return "\n".join(lines) + "\n"


def _positive(value: Any, where: str, field: str, *, zero: bool = False) -> int:
    if type(value) is not int or value < (0 if zero else 1):
        kind = "a non-negative" if zero else "a positive"
        raise UserError(f"{where}: field '{field}' must be {kind} integer, got {value!r}")
    return value


def parse_config(folder: Path, data: dict[str, Any], where: str) -> LadderConfig:
    """Validate a ladder's settings; `UserError` names the file and field."""
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise UserError(f"{where}: unknown field '{unknown[0]}' (known: {', '.join(FIELDS)})")
    kw: dict[str, Any] = {}
    if "name" in data:
        if not isinstance(data["name"], str) or not data["name"]:
            raise UserError(f"{where}: field 'name' must be a non-empty string, got {data['name']!r}")
        kw["name"] = data["name"]
    if "seed" in data:
        kw["seed"] = _positive(data["seed"], where, "seed", zero=True)
    if "concurrency" in data:
        kw["concurrency"] = _positive(data["concurrency"], where, "concurrency")
    if "round_pairs" in data:
        kw["round_pairs"] = _positive(data["round_pairs"], where, "round_pairs", zero=True)
    if "variant" in data:
        raw = data["variant"]
        try:
            kw["variant"] = Variant.from_dict({"base": raw} if isinstance(raw, str) else raw)
        except (VariantError, TypeError, AttributeError) as e:
            raise UserError(f"{where}: field 'variant' is not a valid variant: {e}") from None
    if "time_control" in data:
        tc = data["time_control"]
        if not isinstance(tc, dict):
            raise UserError(f"{where}: field 'time_control' must be a table, got {tc!r}")
        try:
            kw["time_control"] = TimeControl(**tc)
        except (TypeError, ValueError) as e:
            raise UserError(f"{where}: [time_control]: {e}") from None
    for table in ("sandbox", "submit"):
        if table in data and not isinstance(data[table], dict):
            raise UserError(f"{where}: field '{table}' must be a table, got {data[table]!r}")
    if "sandbox" in data:
        kw["sandbox"] = Policy.from_dict(data["sandbox"], f"{where}: [sandbox]")
    if "submit" in data:
        sub = data["submit"]
        bad = sorted(set(sub) - set(SUBMIT_FIELDS))
        if bad:
            raise UserError(f"{where}: [submit]: unknown field '{bad[0]}' (known: {', '.join(SUBMIT_FIELDS)})")
        rules = {}
        for key in SUBMIT_FIELDS:
            if key in sub:
                if key == "check":
                    if not isinstance(sub[key], bool):
                        raise UserError(f"{where}: [submit]: field 'check' must be true or false, got {sub[key]!r}")
                    rules[key] = sub[key]
                else:
                    rules[key] = _positive(sub[key], f"{where}: [submit]", key)
        kw["submit"] = SubmitRules(**rules)
    return LadderConfig(folder=folder, **kw)


def load(folder: Path) -> LadderConfig:
    """The ladder in ``folder``; `UserError` if there is none or its settings are bad."""
    path = folder / CONFIG
    data = read_toml(path, f"{folder}: no ladder here (no {CONFIG}); make one with arena ladder init {folder}")
    cfg = parse_config(folder.resolve(), data, str(path))
    if not cfg.store_path.is_file():
        raise UserError(f"{cfg.store_path}: the ladder's store is missing")
    return cfg


def init(folder: Path, settings: dict[str, Any]) -> LadderConfig:
    """Make a new ladder folder: settings, store, private permissions."""
    if (folder / CONFIG).exists():
        raise UserError(f"{folder}: already holds a ladder ({CONFIG})")
    cfg = parse_config(folder.resolve(), settings, "flags")
    folder.mkdir(parents=True, exist_ok=True)
    private(folder)
    for sub in (cfg.agents_dir, cfg.logs_dir):
        sub.mkdir(exist_ok=True)
        private(sub)
    (folder / CONFIG).write_text(cfg.to_toml())
    private(folder / CONFIG)
    with LadderStore(cfg.store_path, create=True) as store:
        store.bind_secret(new_secret())
        store.bind_config(cfg.identity(), cfg.config_hash)
    private(cfg.store_path)
    return cfg


def open_store(cfg: LadderConfig) -> LadderStore:
    """The ladder's store, checked against its settings. A ladder made before secrets
    gets its secret now: its planned pairs keep their seeds, new ones use the secret."""
    store = LadderStore(cfg.store_path)
    store.bind_config(cfg.identity(), cfg.config_hash)
    store.bind_secret(new_secret())
    return store


def root_seed(cfg: LadderConfig, store: LadderStore) -> int:
    """The root seed of the ladder's deals, scheduler and agent seeds: the store's secret,
    mixed with the settings' seed if there is one."""
    secret = store.secret()
    if secret is None:
        secret = store.bind_secret(new_secret())
    return ladder_root(cfg.seed, secret)


def manifests(store: LadderStore, keys: Sequence[str]) -> dict[str, Manifest]:
    """The immutable copies of the entries ``keys``, under their entry keys."""
    out = {}
    for key in keys:
        e = store.entry(key)
        if e is None:
            raise UserError(f"{store.path}: no entry {key!r}")
        out[key] = load_manifest(Path(e["folder"]))
    return out


# -- ratings and scheduling ---------------------------------------------------------------------


def ratings(store: LadderStore) -> Ratings:
    """Ratings of every entry (retired ones too) from every match so far: Bradley-Terry
    for a two-handed game; at tables the team model (partnerships) or Plackett-Luce
    (three-handed), fitted to the store's results."""
    keys = [e["key"] for e in store.entries()]
    if store.players > 2:
        return fit_table_counts(TableResults.of_store(store, keys))
    return fit(store.results(), keys)


#: The share of a round's picks that go to the agent with the fewest games (against its
#: most valuable opponent), so that no agent whose place is in doubt is starved.
EXPLORE = 0.125
#: A neighbour gap whose order is wrong with a chance below this (from `order_z`) is
#: settled: no pairing across it is played while another pairing is open.
SETTLED = 0.001
#: What a neighbour gap weighs when its order is settled; one in doubt weighs this plus
#: the bits of its order still unknown (up to one).
BASE_WEIGHT = 0.5


def _bits(p: np.ndarray) -> np.ndarray:
    """Bits of an order still unknown when it is wrong with probability ``p`` (at most
    1/2): the binary entropy, 1 bit at 1/2, about 0 near 0."""
    p = np.clip(p, 1e-300, 0.5)
    return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))


def choose_pairs(active: Sequence[str], rated: Ratings, n: int, rng: random.Random) -> list[tuple[str, str]]:
    """``n`` pairings among ``active`` (repeats allowed) for a round, chosen for what
    their results would tell about the ranking.

    The active agents are ordered by rating; gap k lies between the k-th and the
    (k+1)-th. Its variance ``v_k`` comes from the fit's covariance, and its doubt from
    `order_z` (the likelihood ratio of a tie: unlike gap / SE it is not fooled by an
    agent that lost every match, whose SE the prior holds large): the gap weighs
    `BASE_WEIGHT` plus the bits of its order still unknown, ``h(Phi(-|z_k|))``. A
    duplicate pair of a and b adds the Fisher information ``2 C^2 p(1-p)`` (p the
    expected score) to ``r_a - r_b``, which lowers every ``v_k`` (a rank-one update of
    the covariance). A pairing's value is ``sum_k weight_k log(v_k / v_k')``: the
    information it brings about each neighbour gap, gaps in doubt counting up to three
    times as much as settled ones.

    The round is planned greedily, the covariance updated after each pick as if it were
    played, so a round spreads over the pairings that matter. A share `EXPLORE` of the
    picks (drawn from ``rng``) go to the agent with the fewest games (planned ones
    counted), against its most valuable opponent: new entries come first, and no agent
    whose place is in doubt is starved. A settled gap (`SETTLED`) cuts the ranking: no
    pairing across it is played (its result is not in doubt) unless no other pairing is
    open. Deterministic given ``rng``'s state; `plan_round` seeds it per round."""
    if len(active) < 2:
        return []
    idx = [rated.index(k) for k in active]
    elo = np.asarray(rated.elo, dtype=float)[idx]
    cov = np.asarray(rated.covariance, dtype=float)[np.ix_(idx, idx)].copy()
    games = np.asarray(rated.games, dtype=float)[idx].copy()
    m = len(active)
    order = sorted(range(m), key=lambda k: (-elo[k], k))
    place = np.argsort(order)  # place[k]: agent k's place, 0 the best
    gaps = np.zeros((m - 1, m))  # row k: r of the k-th best minus r of the (k+1)-th
    gaps[np.arange(m - 1), order[:-1]] = 1.0
    gaps[np.arange(m - 1), order[1:]] = -1.0
    z = np.array([order_z(rated.wins_matrix, idx[a], idx[b], rated.prior, rated.elo) for a, b in pairwise(order)])
    wrong = normal_cdf(-np.abs(z))
    weight = BASE_WEIGHT + _bits(wrong)
    ii, jj = np.triu_indices(m, 1)  # the candidate pairings
    p = np.asarray(expected_score(elo[ii] - elo[jj]), dtype=float)
    info = 2 * C * C * p * (1 - p)
    cuts = np.concatenate([[0], np.cumsum(wrong < SETTLED)])  # settled gaps above each place
    is_open = cuts[np.minimum(place[ii], place[jj])] == cuts[np.maximum(place[ii], place[jj])]
    if not is_open.any():
        is_open[:] = True
    cols = np.arange(len(ii))
    out = []
    for _ in range(n):
        var = np.maximum(np.einsum("ki,ij,kj->k", gaps, cov, gaps), 1e-12)
        su = cov[:, ii] - cov[:, jj]  # cov @ (e_a - e_b), one column per candidate
        usu = np.maximum(su[ii, cols] - su[jj, cols], 0.0)
        drop = info * (gaps @ su) ** 2 / (1 + info * usu)  # each v_k's decrease
        value = (weight[:, None] * -np.log1p(-np.minimum(drop / var[:, None], 1 - 1e-12))).sum(axis=0)
        allowed = is_open
        if rng.random() < EXPLORE:
            members = np.unique(np.concatenate([ii[is_open], jj[is_open]]))
            least = games[members].min()
            agent = rng.choice([int(a) for a in members if games[a] == least])
            allowed = is_open & ((ii == agent) | (jj == agent))
        c = int(np.flatnonzero(allowed)[np.argmax(value[allowed])])
        a, b = int(ii[c]), int(jj[c])
        out.append((active[a], active[b]))
        cov -= info[c] * np.outer(su[:, c], su[:, c]) / (1 + info[c] * usu[c])
        games[[a, b]] += 2
    return out


#: A table may seat only agents within this many places more than its seats of one
#: another in the current order (all tables when there are no more active agents).
TABLE_WINDOW = 2


def _side_information(sides: Sequence[Sequence[int]], elo: np.ndarray, n: int) -> np.ndarray:
    """Fisher information (Elo scale, ``n`` x ``n`` over a table's members) of one match's
    result read as the choice of its winning side (each side's strength the sum of its
    members' ratings): ``C^2 (E[u u'] - E[u] E[u]')``, u the winning side's membership."""
    u = np.zeros((len(sides), n))
    for k, side in enumerate(sides):
        u[k, list(side)] = 1.0
    s = C * (u @ elo)
    pi = np.exp(s - s.max())
    pi /= pi.sum()
    mean = pi @ u
    return C * C * (u.T @ (pi[:, None] * u) - np.outer(mean, mean))


def table_information(elo: np.ndarray, players: int) -> np.ndarray:
    """The information of one deck set at a table of ``players`` agents with ratings
    ``elo`` (in its sorted order): each seating's winning side (`_side_information`),
    summed over `seatings`: teams of seats 0+2 and 1+3 at four, every seat alone at three."""
    out = np.zeros((players, players))
    for seats, teams in seatings(range(players)):
        sides = teams if teams is not None else [(s,) for s in seats]
        out += _side_information(sides, elo, players)
    return out


def choose_tables(
    active: Sequence[str], rated: Ratings, n: int, players: int, rng: random.Random
) -> list[tuple[str, ...]]:
    """``n`` tables (sorted tuples of ``players`` distinct agents of ``active``; a table
    may come back) for a round of a three- or four-handed game, chosen for what one deck
    set at each would tell about the ranking.

    The measure is `choose_pairs`': the gaps between neighbours in the current order,
    each weighted `BASE_WEIGHT` plus the bits of its order still unknown, and a table's
    value ``sum_k weight_k log(v_k / v_k')``, ``v_k`` the gap's variance before and after
    the set's results. Why this rather than "the least known agent with its nearest
    neighbours" alone: at a table the information is not one number for one pair but a
    matrix over its members (`table_information`: in a partnership game a set tells about
    every sum of partners, so also about the gaps between the others), and the greedy
    update of the covariance (``cov - cov_S M cov_S'``, ``M = I (1 + cov_SS I)^-1``, I the
    set's information) makes a round spread over the tables that matter, as it does for
    pairs. The simple rule is kept where it is right: a share `EXPLORE` of the picks
    must seat the agent with the fewest games (planned ones counted: new entries first),
    and a table seats only agents within `TABLE_WINDOW` places more than its seats of one
    another in the rating order (a table of far-apart agents has a foregone result, and
    the candidates stay few however large the ladder). The doubt of a gap comes from its
    ``z = gap / SE`` (`order_z` is Bradley-Terry's likelihood ratio, not this model's), and
    the information from the winning side only: for an order of finish it is a lower
    bound. Tables spanning the fewest settled gaps (`SETTLED`) are preferred: none while
    a table without one is open. Deterministic given ``rng``'s state."""
    m = len(active)
    if m < players:
        return []
    idx = [rated.index(k) for k in active]
    elo = np.asarray(rated.elo, dtype=float)[idx]
    cov = np.asarray(rated.covariance, dtype=float)[np.ix_(idx, idx)].copy()
    games = np.asarray(rated.games, dtype=float)[idx].copy()
    order = sorted(range(m), key=lambda k: (-elo[k], k))
    place = np.argsort(order)
    gaps = np.zeros((max(m - 1, 0), m))
    gaps[np.arange(m - 1), order[:-1]] = 1.0
    gaps[np.arange(m - 1), order[1:]] = -1.0
    var0 = np.maximum(np.einsum("ki,ij,kj->k", gaps, cov, gaps), 1e-12)
    wrong = normal_cdf(-np.abs(gaps @ elo) / np.sqrt(var0))
    weight = BASE_WEIGHT + _bits(wrong)
    width = players + TABLE_WINDOW
    cands = sorted({
        tuple(sorted(c)) for start in range(max(m - width, 0) + 1)
        for c in itertools.combinations(order[start:start + width], players)
    })  # fmt: skip
    tabs = np.array(cands, dtype=int)  # (T, players): agent indices, ascending
    info = np.array([table_information(elo[t], players) for t in tabs])
    cuts = np.concatenate([[0], np.cumsum(wrong < SETTLED)])
    spans = cuts[place[tabs].max(axis=1)] - cuts[place[tabs].min(axis=1)]
    best = spans == spans.min()
    eye = np.eye(players)
    out = []
    for _ in range(n):
        var = np.maximum(np.einsum("ki,ij,kj->k", gaps, cov, gaps), 1e-12)
        gc = (gaps @ cov)[:, tabs].transpose(1, 0, 2)  # (T, gaps, players)
        cov_ss = cov[tabs[:, :, None], tabs[:, None, :]]
        mm = info @ np.linalg.inv(eye + cov_ss @ info)
        drop = np.einsum("tkp,tpq,tkq->tk", gc, mm, gc)
        value = (weight * -np.log1p(-np.clip(drop / var, 0.0, 1 - 1e-12))).sum(axis=1)
        allowed = best
        if rng.random() < EXPLORE:
            least = games.min()
            agent = rng.choice([a for a in range(m) if games[a] == least])
            allowed = (tabs == agent).any(axis=1)
            allowed = allowed & (spans == spans[allowed].min())
        c = int(np.flatnonzero(allowed)[np.argmax(value[allowed])])
        t = tabs[c]
        out.append(tuple(sorted(active[a] for a in t)))
        cs = cov[:, t]
        cov -= cs @ mm[c] @ cs.T
        cov = (cov + cov.T) / 2
        games[t] += len(seatings(range(players)))
    return out


def specs_for(pairs: Sequence[dict[str, Any]]) -> list[MatchSpec]:
    """The matches of each planned pair (ids ``L<pair>.<game>``): two, the seats swapped;
    of a planned table, one deck set in every seating (`arena.tournament.seating`)."""
    out = []
    for p in pairs:
        agents = p.get("agents") or (p["a"], p["b"])
        if len(agents) > 2:
            # which of each team's members sits in seat 0 (four-handed): a coin from the set's
            # seed, so over a ladder's sets every agent holds every seat about equally often
            games = seatings(agents, set_index=p["seed"] & 1)
            for game, (seats, teams) in enumerate(games):
                out.append(MatchSpec(len(games) * p["id"] + game, f"L{p['id']}.{game}", "~".join(agents), p["id"],
                                     game, seats, p["seed"], teams))  # fmt: skip
            continue
        for game, seats in ((0, (p["a"], p["b"])), (1, (p["b"], p["a"]))):
            out.append(
                MatchSpec(
                    2 * p["id"] + game, f"L{p['id']}.{game}", f"{p['a']}~{p['b']}", p["id"], game, seats, p["seed"]
                )
            )
    return out


def plan_round(cfg: LadderConfig, store: LadderStore) -> tuple[int, list[dict[str, Any]]]:
    """The round to play next: an open round (planned, not finished) if there is one,
    else a new round planned now. Returns (round, its pairs or tables), or (round, [])
    when fewer agents are active than a match seats."""
    last = store.last_round()
    if last >= 0 and not store.has_history(last):
        return last, store.pairs(last)
    round_ = last + 1
    active = [e["key"] for e in store.entries("active")]
    if len(active) < cfg.players:
        return round_, []
    rated = ratings(store)
    root = root_seed(cfg, store)
    rng = random.Random(derive_seed(root, "schedule", round_))
    if cfg.players > 2:
        sets = store.table_sets()
        planned_tables = []
        for table in choose_tables(active, rated, cfg.pairs_per_round, cfg.players, rng):
            k = sets.get(table, 0)  # the table's deck set: its seed as a table tournament's set k
            sets[table] = k + 1
            planned_tables.append((*table, derive_seed(root, "table", *table, k)))
        return round_, store.plan(round_, planned_tables)
    chosen = choose_pairs(active, rated, cfg.pairs_per_round, rng)
    next_id = len(store.pairs())
    planned = [(a, b, derive_seed(root, "ladder-pair", next_id + k)) for k, (a, b) in enumerate(chosen)]
    return round_, store.plan(round_, planned)


def finish_round(store: LadderStore, round_: int) -> Ratings:
    """Record every entry's rating after ``round_``."""
    rated = ratings(store)
    store.record_history(
        round_, [(k, rated.elo[i], rated.se[i], int(rated.games[i])) for i, k in enumerate(rated.names)]
    )
    return rated


def rounds_summary(store: LadderStore) -> str:
    """The rounds in words, as ``standings`` and ``history`` both say them: the finished
    ones (their ratings are in the history) and an open one (planned, not all played)."""
    done = store.finished_rounds()
    text = f"{done} round{'' if done == 1 else 's'} finished"
    last = store.last_round()
    if last >= 0 and not store.has_history(last):
        text += ", 1 open (planned, not all played)"
    return text


def open_pairs_done(store: LadderStore, pairs: Sequence[dict[str, Any]]) -> bool:
    done = store.done_ids()
    return all(s.match_id in done for s in specs_for(pairs))


def standings_frame(store: LadderStore, rated: Ratings, *, include_retired: bool = True) -> Any:
    """The standings (``rated``: the store's `ratings`) as a DataFrame: agent, elo, 95%
    interval, games, score, flag, status."""
    df = rated.to_frame()
    status = {e["key"]: e["status"] for e in store.entries()}
    df["status"] = df["agent"].map(status)
    if not include_retired:
        df = df[df["status"] == "active"].reset_index(drop=True)
    return df


def format_standings(df: Any, reference: str) -> str:
    """The standings as text; ``reference`` is the fit's (a table model adds its name
    after "; ")."""
    if df.empty:
        return "no agents yet: submit some with arena submit PATH --ladder DIR"
    w = max(5, *(len(a) for a in df["agent"]))
    lines = [f"{'#':>3}  {'agent':<{w}}  {'elo':>7}  {'95% interval':>17}  {'games':>6}  {'score':>6}  status"]
    for k, r in enumerate(df.itertuples(index=False), 1):
        interval = f"[{r.ci_low:.0f}, {r.ci_high:.0f}]"
        score = "-" if np.isnan(r.score) else f"{100 * r.score:.1f}%"
        lines.append(
            f"{k:>3}  {r.agent:<{w}}  {r.elo:>7.1f}  {interval:>17}  {r.games:>6}  {score:>6}  {r.status}"
            + (f"  ({r.flag})" if r.flag else "")
        )
    reference, _, model = reference.partition("; ")
    model = model[:1].upper() + model[1:] if model else "Bradley-Terry"
    lines.append(f"{model} on the Elo scale, {reference}; 95% intervals from the Hessian.")
    return "\n".join(lines)


def history_chart(store: LadderStore, path: Path, *, title: str = "Ratings over time") -> Path | None:
    """Write the history chart as a PNG; None when no round is recorded yet."""
    fig = history_figure(store.history(), {e["key"]: e["status"] for e in store.entries()}, title)
    if fig is None:
        return None
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def history_figure(rows: Sequence[dict[str, Any]], status: dict[str, str], title: str) -> Any:
    """Each agent's rating after each round, with a band of one standard error; retired
    agents dashed. A matplotlib figure, or None without rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return None
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["games"] > 0:
            by_agent.setdefault(r["agent"], []).append(r)
    fig, ax = plt.subplots(figsize=(9, 5))
    for agent, pts in sorted(by_agent.items()):
        x = np.array([p["round"] for p in pts])
        y = np.array([p["elo"] for p in pts])
        s = np.array([p["se"] for p in pts])
        style = "--" if status.get(agent) == "retired" else "-"
        (line,) = ax.plot(x, y, style, marker="o" if len(x) < 30 else None, ms=3, label=agent)
        ax.fill_between(x, y - s, y + s, color=line.get_color(), alpha=0.15)
    ax.set_xlabel("round")
    ax.set_ylabel("Elo (mean 0)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def agents_label(keys: Sequence[str]) -> str:
    return ", ".join(keys) if keys else "none"
