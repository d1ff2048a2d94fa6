"""``arena compare NEW OLD`` in a three- or four-handed game: duplicate duos at a table of references.

Two-handed, NEW and OLD meet in duplicate pairs (`arena.tournament.compare`). At a table there
are more seats than versions, so the other seats are held by a fixed **reference** agent
(``--reference``, default `DEFAULT_REFERENCE`: a bundled agent that plays every game, needs
no build and shares the bundled agents' lead at the tables, so that a seat's result depends
on how it plays and not on a weak table's blunders), and NEW never meets OLD: each plays
the same cards in the same seat against the same references, and the difference of their
results is the measure.

**Deck sets.** Deck set ``k`` has one seed (``derive_seed(root, "compare-table", NEW, OLD
sorted, REFERENCE, k)``), so one sequence of decks. For each seat ``s`` NEW plays those
decks in seat ``s`` (game ``2s``) and OLD plays them in seat ``s`` (game ``2s + 1``), the
references in the other seats (four-handed: NEW's or OLD's partner, in seat ``s + 2``, is
a reference too). A reference's seed derives from the match seed and its seat, so in the
two matches of seat ``s`` the references see the same cards and are seeded the same: the
two matches differ only by NEW or OLD. Such a *duo* is the table's duplicate pair. Each
seat's reference is its own agent pool (seat name ``REFERENCE@seat``, `seat_label`): the
protocol tells a process's matches apart by match id only, so one process must never
hold two seats of one match.

**Scores.** A seat's result is 1 when its side came first alone, 1/2 when it shared
first place (a tie, an adjudicated shared lead), else 0 (`first_share`). A duo scores
``(1 + NEW's result - OLD's) / 2`` for NEW: 0, 1/4, 1/2, 3/4 or 1, the two-handed pair's
score (a Sixty-Six pair is the case without shared places). A deck set scores the mean of
its seats' duos: a multiple of ``1 / (4 * seats)``.

**The unit of the test is the deck set**, not the duo: the duos of a set play the same
decks, so their scores are correlated (a deck that makes every seat's result a toss-up
does so for all of them), and only whole sets are independent samples. The deck-set
scores go to a GSPRT on their own values (`arena.stats.sprt.ScoreSPRT`), the pentanomial
method with ``4 * seats + 1`` outcomes instead of 5. Logistic Elo is then the Elo of the
mean deck-set score (as a pair's mean is a two-handed pair's); normalized Elo counts a set
as ``2 * seats`` games (each duo as a pair: its t-value ``sqrt(2 * seats)`` times the
per-game one), so a set of three duos weighs as three pairs would if the duos were
independent. Neither is on the scale of the table ratings (`arena.stats.table_rating`).

A deck set with a match that has no result (lost before play) is **void**, as a pair is
two-handed: left out of the test, and its matches played again by ``--resume``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import trio

from ..errors import UserError
from ..game import Variant, VariantError, derive_seed
from ..play.referee import MatchRecord
from ..protocol.codec import TimeControl
from ..results.store import Store
from ..runtime.agents import Manifest, resolve, unplayed
from ..runtime.sandbox import Sandbox
from ..stats.rating import is_missing
from ..stats.sprt import Z95, ScoreSPRT, estimate_text, los_text, margin_diagnostic
from .compare import Comparison, Pair
from .runner import Finished, Pools, play
from .schedule import TournamentConfig
from .secret import read_secret_file
from .spec import MatchSpec

#: The reference agent that holds the other seats unless ``--reference`` names one.
DEFAULT_REFERENCE = "heuristic"

#: The columns of a stored table match that a table comparison reads.
TABLE_COLUMNS = (
    "id", "pair_index", "game", "seat0", "seat1", "seat2", "seat3", "winner", "kind", "place0", "place1", "place2",
    "place3", "score0", "score1", "score2", "fault", "fault_deal", "deals",
)  # fmt: skip


def seat_label(reference: str, seat: int) -> str:
    """The seat name of the reference in ``seat`` (a pool of its own)."""
    return f"{reference}@{seat}"


def table_variant(name: str) -> Variant | None:
    """The variant preset ``name`` when it seats three or four, else None (a two-handed
    preset, or a bad name: the two-handed path says what is wrong with it)."""
    try:
        variant = Variant.from_dict({"base": name})
    except VariantError:
        return None
    return variant if variant.players > 2 else None


@dataclasses.dataclass(frozen=True)
class TableCompareConfig(TournamentConfig):
    """A table comparison's config: ``agents`` are NEW and OLD, ``reference`` holds the other
    seats, ``pairs`` is the number of deck sets. Its identity names the reference, so a
    store of one reference is never resumed with another."""

    reference: Manifest | None = None

    @property
    def ref(self) -> Manifest:
        assert self.reference is not None
        return self.reference

    def identity(self) -> dict[str, Any]:
        out = super().identity()
        out.pop("seating", None)
        return {**out, "format": "compare", "reference": self.ref.name}

    def schedule(self) -> list[MatchSpec]:
        new, old = self.names
        return compare_schedule(new, old, self.ref.name, self.players, self.pairs, self.root)

    def seat_manifests(self) -> dict[str, Manifest]:
        """Every seat name of the schedule -> its agent."""
        out = {m.name: m for m in self.agents}
        out.update({seat_label(self.ref.name, s): self.ref for s in range(self.players)})
        return out

    def distinct_agents(self) -> list[Manifest]:
        """NEW, OLD and the reference, each once (the reference may be one of the two)."""
        return list({m.name: m for m in (*self.agents, self.ref)}.values())


def compare_schedule(new: str, old: str, reference: str, players: int, sets: int, root: int) -> list[MatchSpec]:
    """Every match of a table comparison, set by set; see the module's docstring. Match id
    ``NEW~OLD#k.g``: game ``g = 2s`` is NEW in seat ``s``, ``2s + 1`` OLD there."""
    out: list[MatchSpec] = []
    key = f"{new}~{old}"
    for k in range(sets):
        seed = derive_seed(root, "compare-table", *sorted((new, old)), reference, k)
        for s in range(players):
            for j, who in enumerate((new, old)):
                seats = tuple(who if t == s else seat_label(reference, t) for t in range(players))
                teams = ((seats[0], seats[2]), (seats[1], seats[3])) if players == 4 else None
                game = 2 * s + j
                out.append(MatchSpec(len(out), f"{key}#{k}.{game}", key, k, game, seats, seed, teams))
    return out


def table_config(
    new: str,
    old: str,
    reference: str,
    variant: Variant,
    *,
    seed: int | None,
    secret_file: str | None,
    concurrency: int | None,
    store: str | None,
    time_control_flags: Mapping[str, Any],
    sets: int,
) -> TableCompareConfig:
    """The config of a table comparison from the command's flags, every bad one refused in
    one line before any process starts. (`arena.tournament.schedule.load_config` seats
    distinct agents, a table each; here the reference sits in several seats.)"""
    manifests = []
    for flag, spec in (("NEW", new), ("OLD", old), ("--reference", reference)):
        try:
            manifests.append(resolve(spec))
        except UserError as e:
            raise UserError(f"{flag}: names an agent that cannot be used: {e}") from None
    m_new, m_old, m_ref = manifests
    if m_new.name == m_old.name:
        raise UserError(f"NEW and OLD: both are agent {m_new.name!r}; compare two different agents")
    for flag, m in (("--variant", m_new), ("--variant", m_old), ("--reference", m_ref)):
        problem = unplayed([m], variant, tables=True)
        if problem:
            raise UserError(f"{flag}: {problem}")
    if seed is not None and seed < 0:
        raise UserError(f"--seed: must be a non-negative integer, got {seed}")
    secret = None
    if secret_file is not None:
        if seed is not None:
            raise UserError(
                "--secret-file: cannot be used with a seed: the secret is the root seed (leave the seed out)"
            )
        secret = Path(secret_file)
        try:
            seed = read_secret_file(secret)
        except UserError as e:
            raise UserError(f"--secret-file: {e}") from None
    if concurrency is None:
        concurrency = max(2, os.cpu_count() or 2)
    if not 1 <= concurrency <= 100_000:
        raise UserError(f"--concurrency: must be an integer 1..100000, got {concurrency!r}")
    tc = {k: v for k, v in time_control_flags.items() if v is not None}
    for key, value in tc.items():
        try:
            TimeControl(**{key: value})
        except ValueError as e:
            raise UserError(f"--{key.replace('_', '-')}: {e}") from None
    name = f"compare-{m_new.name}-vs-{m_old.name}-{variant.name}"
    return TableCompareConfig(
        name=name, format="compare", agents=(m_new, m_old), challenger=None, pairs=sets, seed=seed,
        concurrency=concurrency, store=Path(store or f"reports/{name}.sqlite"), variant=variant,
        time_control=TimeControl(**tc), secret=seed is None or secret is not None, secret_file=secret,
        reference=m_ref,
    )  # fmt: skip


def table_match_row(spec: MatchSpec, record: MatchRecord) -> dict[str, Any]:
    """The fields of the store's row for a table match just played that a comparison reads."""
    f, n = record.forfeit, len(spec.seats)
    places = record.places or [None] * n
    row = {
        "id": spec.match_id, "pair_index": spec.pair_index, "game": spec.game, "winner": record.winner,
        "kind": record.kind, "fault": f.code if f else None, "fault_deal": f.deal if f else None,
        "deals": len(record.deals),
    }  # fmt: skip
    for s in range(4):
        row[f"seat{s}"] = spec.seats[s] if s < n else None
        row[f"place{s}"] = places[s] if s < n else None
    for side in range(3):
        row[f"score{side}"] = record.score[side] if side < len(record.score) else None
    return row


def _seats(row: Mapping[str, Any]) -> int:
    return 4 if not is_missing(row.get("seat3")) else 3


def table_has_result(row: Mapping[str, Any]) -> bool:
    """Whether a stored table match is a result of play: not lost before play (a fault
    with no deal: `Store.unplayed_ids`), and with a winner, places, or no fault at all (a
    tie nobody won is a result; both teams at fault is not)."""
    fault = not is_missing(row["fault"])
    if fault and is_missing(row["fault_deal"]) and not row["deals"]:
        return False
    places = any(not is_missing(row.get(f"place{s}")) for s in range(_seats(row)))
    return not is_missing(row["winner"]) or places or not fault


def first_share(row: Mapping[str, Any], seat: int) -> float:
    """A seat's result: 1 when its side came first alone, 1/2 when it shared first place,
    else 0 (a row with a result, `table_has_result`)."""
    n = _seats(row)
    winner = None if is_missing(row["winner"]) else int(row["winner"])
    if row.get("kind") == "team" or n == 4:  # the winner is a team: seats t and t + 2
        return 0.5 if winner is None else float(winner == seat % 2)
    places = [row.get(f"place{s}") for s in range(n)]
    if not any(is_missing(p) for p in places):
        first = [s for s in range(n) if int(places[s]) == 1]
    elif winner is not None:
        first = [winner]
    else:  # a shared lead that nobody won, without places: the leaders share first
        scores = [float(row[f"score{s}"]) for s in range(n)]
        first = [s for s in range(n) if scores[s] == max(scores)]
    if seat not in first:
        return 0.0
    return 1.0 if len(first) == 1 else 0.5


def side_score(row: Mapping[str, Any], seat: int) -> float:
    """The final score of a seat's side (a team's in the four-handed games)."""
    return float(row[f"score{seat % 2 if _seats(row) == 4 else seat}"])


class TableComparison(Comparison):
    """A table comparison's state: `Comparison` with deck sets for pairs. ``settings``
    add ``reference`` (its presence makes a comparison a table one) and ``seats``."""

    unit = "deck sets"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = dict(settings)
        self.new, self.old = settings["new"], settings["old"]
        self.reference: str = settings["reference"]
        self.seats = int(settings["seats"])
        self.fixed = bool(settings.get("fixed"))
        self.model = settings.get("model", "normalized")
        self.test = ScoreSPRT(
            settings["elo0"], settings["elo1"], settings["alpha"], settings["beta"], settings["max_pairs"],
            self.model, steps=4 * self.seats, games=2 * self.seats, sample="deck set",
        )  # fmt: skip
        self.margins: list[float] = []
        self.void = 0
        self._games: dict[int, dict[int, tuple[float | None, float]]] = {}  # set -> game -> (result, side score)
        self._next = 0
        self.on_pair: Callable[[Pair], None] | None = None

    def add(self, row: Mapping[str, Any]) -> list[Pair]:
        """Read one match (a store row, a `table_match_row`, or the report's record); returns
        the deck sets it completes, with the ones waiting for it, in order."""
        index, number = int(row["pair_index"]), int(row["game"])
        if index < self._next or number in self._games.get(index, {}):
            raise ValueError(f"match {number} of deck set {index} was read twice")
        seat, who = divmod(number, 2)
        want = (self.new, self.old)[who]
        if row[f"seat{seat}"] != want:
            raise ValueError(f"match {row['id']}: seat {seat} holds {row[f'seat{seat}']!r}, not {want!r}")
        if table_has_result(row):
            game: tuple[float | None, float] = (first_share(row, seat), side_score(row, seat))
        else:
            game = (None, 0.0)
        self._games.setdefault(index, {})[number] = game
        done = []
        while len(self._games.get(self._next, ())) == 2 * self.seats:
            games = self._games.pop(self._next)
            if any(games[g][0] is None for g in games):
                self.void += 1
                pair = Pair(self._next, None, None)
            else:
                # 4 x the set's mean duo score (1 + r_new - r_old) / 2, summed as whole numbers of halves
                k = sum(2 + round(2 * games[2 * s][0]) - round(2 * games[2 * s + 1][0]) for s in range(self.seats))
                score = k / (4 * self.seats)
                margin = sum(games[2 * s][1] - games[2 * s + 1][1] for s in range(self.seats))
                self.test.add(score)
                self.margins.append(margin)
                pair = Pair(self._next, score, margin)
            self._next += 1
            done.append(pair)
            if self.on_pair is not None:
                self.on_pair(pair)
        return done

    def score_text(self) -> str:
        """The mean deck-set score for NEW, with its 95% interval from two sets on."""
        est = self.test.estimate()
        if not est.pairs:
            return "mean deck-set score n/a"
        if est.pairs < 2 or est.sd == 0:
            return f"mean deck-set score {est.mean:.3f}"
        lo, hi = max(0.0, est.mean - Z95 * est.se), min(1.0, est.mean + Z95 * est.se)
        return f"mean deck-set score {est.mean:.3f} [{lo:.3f}, {hi:.3f}]"

    def verdict(self) -> str:
        if not self.fixed:
            return super().verdict()
        est, n = self.test.estimate(), self.test.pairs
        if n == 0:
            return "no deck sets played"
        if n < 2:
            return "too few deck sets for an interval"
        if est.mean in (0.0, 1.0):
            side = "won" if est.mean == 1 else "lost"
            return f"NEW is {'stronger' if est.mean == 1 else 'weaker'}: it {side} every deck set ({n})"
        if est.sd == 0:
            return "inconclusive: every deck set scored the same, so the results cannot tell the two apart"
        if est.ci_low > 0:
            return "NEW is stronger: the 95% interval for Elo lies above 0"
        if est.ci_high < 0:
            return "NEW is weaker: the 95% interval for Elo lies below 0"
        return "inconclusive: the 95% interval for Elo contains 0"

    def estimate(self) -> str:
        est = self.test.estimate()
        if est.pairs and est.sd == 0 and est.mean == 0.5 and not any(self.margins):
            return (
                "every deck set scored 1/2 with equal scores seat by seat: the two agents played identically; no "
                "evidence either way (no interval)"
            )
        return f"{estimate_text(est, self.model)}, LOS {los_text(est)}"

    def describe(self) -> str:
        """The verdict, the deck-set score, the estimate, the LLR, the margin diagnostic and the void sets."""
        diag = margin_diagnostic(self.margins)
        what = "deck-set margin (NEW's side's final score less OLD's, over the set's seats)"
        if diag.pairs < 2:
            margin = "too few deck sets for the margin diagnostic"
        elif diag.sd == 0:
            margin = f"every {what} was {diag.mean:+g} (diagnostic)"
        else:
            margin = f"mean {what} {diag.mean:+.2f} [{diag.ci_low:+.2f}, {diag.ci_high:+.2f}] (diagnostic)"
        t = self.test
        behind, even, ahead = t.tally
        llr = "" if self.fixed else f", LLR {t.llr:.2f} in [{t.lower:.2f}, {t.upper:.2f}]"
        void = f" {self.void_text()}." if self.void else ""
        return (
            f"{self.verdict()}. {t.pairs} deck sets ({self.seats} seats, {self.reference} in the others; NEW behind "
            f"in {behind}, even in {even}, ahead in {ahead}): {self.score_text()}, {self.estimate()}{llr}; "
            f"{margin}.{void}"
        )

    def summary(self) -> dict[str, Any]:
        out = super().summary()
        out["reference"] = self.reference
        return out

    def line(self) -> str:
        """The live status line: deck sets (NEW behind, even, ahead; void), the mean deck-set
        score, the LLR against its bounds, the estimate, the status."""
        t = self.test
        behind, even, ahead = t.tally
        void = f"; void {self.void}" if self.void else ""
        sets = f"deck sets {t.pairs} (behind: {behind}, even: {even}, ahead: {ahead}{void})  {self.score_text()}"
        if self.fixed:
            return f"{sets}  {self.estimate()}"
        return f"{sets}  LLR {t.llr:.2f} [{t.lower:.2f}, {t.upper:.2f}]  {self.estimate()}  {t.status}"


async def play_tables(
    cfg: TableCompareConfig,
    specs: list[MatchSpec],
    store: Store,
    run_id: int,
    *,
    on_finished: Callable[[Finished], None],
    should_stop: Callable[[], bool],
    logs: Path,
    sandbox: Sandbox,
    warn: Callable[[str], None],
) -> int:
    """`arena.tournament.runner.run_tournament` for a table comparison: the same `play`, with
    a pool for each seat name (each reference seat its own)."""
    async with trio.open_nursery() as processes:
        pools = Pools.for_config(processes, cfg, sandbox, logs, warn)
        try:
            return await play(specs, cfg.seat_manifests(), pools, store, run_id, on_finished=on_finished,
                              should_stop=should_stop)  # fmt: skip
        finally:
            pools.close()
