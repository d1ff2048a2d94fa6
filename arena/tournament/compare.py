"""Comparing two versions of a strategy: duplicate pairs fed to an SPRT as they finish.

NEW and OLD play a head-to-head tournament of duplicate pairs (`arena.tournament.schedule`); each
complete pair scores 0, 1/2 or 1 for NEW. Pairs are fed to the `arena.stats.sprt.SPRT` in pair
order (a pair that finishes early waits for the ones before it), so where the test stops
depends only on the results, not on timing: a resumed or replayed comparison stops at the
same pair. Beside the test, the game-point margins per pair are summarised as a
diagnostic.

**Void pairs.** A match with no result says nothing about strength: one lost before play
(a seat could not be started; `arena.results.store` calls it unplayed, and a resumed run plays it
again) or one with no winner (neither seat started). A pair with such a match is *void*:
it is counted and said, but not fed to the test or the estimates. `Comparison.add` is the
one place that reads a match for a comparison: the live test, a resumed one and the
report all go through it, and the command's final words are `Comparison.from_rows` on the
store, exactly what the report computes.

**What a verdict means** (`Comparison.verdict`). H1 accepted: the results favour a gain of
``elo1`` over one of ``elo0``; had NEW's true gain been ``elo0`` or less, that verdict would
come at most about ``alpha`` of the time. H0 is the mirror image with ``beta``. Neither
says that the true gain is above or below a bound: the estimate's interval, printed beside
the verdict, says where it probably lies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..stats.rating import is_missing
from ..stats.sprt import SPRT, Model, estimate_text, fixed_games_summary, los_text, margin_diagnostic
from ..stats.sprt_plan import unit

if TYPE_CHECKING:
    import pandas as pd

    from ..play.referee import MatchRecord
    from .schedule import MatchSpec

#: The test's defaults, whose operating characteristics docs/compare.md gives
#: (``arena compare --plan`` prints them).
DEFAULTS: dict[str, Any] = {
    "elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05, "max_pairs": 20_000, "model": "normalized",
}  # fmt: skip
#: The largest bound, in normalized Elo, the normalized model's fit handles (a pair's
#: t-value near 1 leaves it no distribution to fit).
MAX_NELO = 200.0


def has_result(row: Mapping[str, Any]) -> bool:
    """Whether a stored match (a `Store.matches` row, or the report's record of one, where a
    missing value may be NaN) is a result of play: it has a winner, and it was not lost
    before play (a fault with no deal: `Store.unplayed_ids`)."""
    if is_missing(row["winner"]):
        return False
    return is_missing(row["fault"]) or not is_missing(row["fault_deal"]) or bool(row["deals"])


#: The columns of a stored match that a comparison reads (`Store.matches` of these alone).
COLUMNS = ("id", "pair_index", "game", "seat0", "seat1", "winner", "score0", "score1", "fault", "fault_deal", "deals")


def match_row(spec: MatchSpec, record: MatchRecord) -> dict[str, Any]:
    """The fields of the store's row for a match just played that a comparison reads."""
    f = record.forfeit
    return {
        "id": spec.match_id, "pair_index": spec.pair_index, "game": spec.game, "seat0": spec.seats[0],
        "seat1": spec.seats[1], "winner": record.winner, "score0": record.score[0], "score1": record.score[1],
        "fault": f.code if f else None, "fault_deal": f.deal if f else None, "deals": len(record.deals),
    }  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Pair:
    """A complete duplicate pair: NEW's pair score and game-point margin, both None if void."""

    index: int
    score: float | None
    margin: int | None

    @property
    def void(self) -> bool:
        return self.score is None


class Comparison:
    """One comparison's state: its matches read in pair order, the SPRT (with ``fixed``, only
    its estimates are used), the pair margins and the void pairs.

    ``settings`` are what `Store.bind_compare` keeps: ``new``, ``old``, ``elo0``, ``elo1``,
    ``alpha``, ``beta``, ``max_pairs``, ``fixed`` and ``model`` (a store written before the
    model was a setting is logistic)."""

    #: What the test counts, in the command's words (a table comparison counts deck sets).
    unit = "pairs"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = dict(settings)
        self.new, self.old = settings["new"], settings["old"]
        self.fixed = bool(settings.get("fixed"))
        self.model: Model = settings.get("model", "logistic")
        self.test = SPRT(settings["elo0"], settings["elo1"], settings["alpha"], settings["beta"],
                         settings["max_pairs"], self.model)  # fmt: skip
        self.margins: list[int] = []
        self.void = 0
        self._games: dict[int, dict[int, tuple[float | None, int]]] = {}  # pair -> game -> (win, margin)
        self._next = 0  # the first pair not yet complete
        #: Told of each pair as it is read (after the test has it): a match can complete
        #: several pairs at once, and a live display wants the test's state after each.
        self.on_pair: Callable[[Pair], None] | None = None

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], settings: Mapping[str, Any]) -> Comparison:
        """A comparison of stored matches, as the report and the command's final result read it."""
        comparison = cls(settings)
        for row in sorted(rows, key=lambda r: (r["pair_index"], r["game"])):
            comparison.add(row)
        return comparison

    def add(self, row: Mapping[str, Any]) -> list[Pair]:
        """Read one match (a store row, or `match_row`); returns the pairs it completes, with
        the ones waiting for it, in pair order, each already fed to the test unless void."""
        index, number = int(row["pair_index"]), int(row["game"])
        if index < self._next or number in self._games.get(index, {}):
            raise ValueError(f"match {number} of pair {index} was read twice")
        me = (row["seat0"], row["seat1"]).index(self.new)
        if has_result(row):
            scores = (int(row["score0"]), int(row["score1"]))
            game = (float(int(row["winner"]) == me), scores[me] - scores[me ^ 1])
        else:
            game = (None, 0)
        self._games.setdefault(index, {})[number] = game
        done = []
        while len(self._games.get(self._next, ())) == 2:
            (w0, m0), (w1, m1) = self._games.pop(self._next).values()
            if w0 is None or w1 is None:
                self.void += 1
                pair = Pair(self._next, None, None)
            else:
                self.test.add((w0 + w1) / 2)
                self.margins.append(m0 + m1)
                pair = Pair(self._next, (w0 + w1) / 2, m0 + m1)
            self._next += 1
            done.append(pair)
            if self.on_pair is not None:
                self.on_pair(pair)
        return done

    @property
    def decided(self) -> bool:
        """Whether the SPRT has stopped (never, with ``fixed``)."""
        return not self.fixed and self.test.finished

    @property
    def finished(self) -> bool:
        """Whether the comparison reached its end: a decision or the cap, or every one of a
        fixed number of pairs with a result. Void pairs leave it unfinished: a resumed run
        plays their matches again."""
        if self.fixed:
            return self.test.pairs >= self.settings["max_pairs"]
        return self.test.finished

    def verdict(self) -> str:
        """The decision in words, each saying what it means and its error rate."""
        s, new, old = self.settings, self.new, self.old
        if self.fixed:
            return fixed_games_summary(*self.test.counts).verdict
        u = unit(self.model)
        e0, e1 = f"{s['elo0']:g} {u}", f"{s['elo1']:g} {u}"
        status = self.test.status
        if status == "H1":
            return (
                f"H1 accepted: the results favour a gain of {e1} over one of {e0} for {new} against {old}; had "
                f"{new}'s true gain been {e0} or less, this verdict would come at most about {s['alpha']:.0%} of "
                "the time"
            )
        if status == "H0":
            return (
                f"H0 accepted: the results favour a gain of {e0} over one of {e1} for {new} against {old}; had "
                f"{new}'s true gain been {e1} or more, this verdict would come at most about {s['beta']:.0%} of "
                "the time"
            )
        if status == "cap":
            return (
                f"no decision: the cap of {s['max_pairs']} {self.unit} was reached with the LLR between its bounds, so "
                f"the results favour neither a gain of {e0} nor one of {e1} at these error rates; the estimate is "
                "all they say"
            )
        return "no decision yet"

    def estimate(self) -> str:
        """The estimate with its 95% interval and the LOS, in the words the live line uses."""
        est = self.test.estimate()
        if est.pairs and est.sd == 0 and est.mean == 0.5 and not any(self.margins):
            return (
                "every pair split 1-1 with mirror-image scores: the two agents played identically; no evidence "
                "either way (no interval)"
            )
        return f"{estimate_text(est, self.model)}, LOS {los_text(est)}"

    def void_text(self) -> str:
        """The void pairs (or deck sets: `unit`) in words, or "" when there are none."""
        if not self.void:
            return ""
        n = self.void
        return (
            f"{n} {self.unit[:-1]}{'s' * (n != 1)} void: a game had no result (a seat could not be started), left "
            "out of the test; --resume plays them again"
        )

    def describe(self) -> str:
        """The verdict, the estimate beside it, the LLR, the margin diagnostic and the void pairs."""
        diag = margin_diagnostic(self.margins)
        if diag.pairs < 2:
            margin = "too few pairs for the margin diagnostic"
        elif diag.sd == 0:
            margin = f"every pair margin was {diag.mean:+g} game points (diagnostic)"
        else:
            margin = (
                f"mean pair margin {diag.mean:+.2f} game points [{diag.ci_low:+.2f}, {diag.ci_high:+.2f}] (diagnostic)"
            )
        t = self.test
        llr = "" if self.fixed else f", LLR {t.llr:.2f} in [{t.lower:.2f}, {t.upper:.2f}]"
        void = f" {self.void_text()}." if self.void else ""
        return f"{self.verdict()}. {t.pairs} pairs: {self.estimate()}{llr}; {margin}.{void}"

    def summary(self) -> dict[str, Any]:
        """A flat snapshot for the report's table and CSV: `SPRT.summary` with the void pairs
        and normalized Elo; ``status`` is "fixed" for a fixed number of pairs."""
        est = self.test.estimate()
        out = {**self.test.summary(), "void": self.void, "nelo": est.nelo, "nelo_low": est.nelo_low,
               "nelo_high": est.nelo_high, "finished": self.finished}  # fmt: skip
        if self.fixed:
            out["status"] = "fixed"
        return out

    def line(self) -> str:
        """The live status line: pairs (and void ones), the LLR against its bounds, the estimate
        in the final result's words (`estimate`), the status (with ``fixed``: no LLR, no status)."""
        t = self.test
        losses, halves, wins = t.counts
        void = f"; void {self.void}" if self.void else ""
        pairs = f"pairs {t.pairs} (0: {losses}, 1/2: {halves}, 1: {wins}{void})"
        if self.fixed:
            return f"{pairs}  {self.estimate()}"
        return f"{pairs}  LLR {t.llr:.2f} [{t.lower:.2f}, {t.upper:.2f}]  {self.estimate()}  {t.status}"


def comparison_class(settings: Mapping[str, Any]) -> type[Comparison]:
    """The comparison that reads a store of these settings: `Comparison`, or for a three- or
    four-handed game (its settings name the ``reference``) `arena.tournament.compare_tables.TableComparison`."""
    if "reference" in settings:
        from .compare_tables import TableComparison

        return TableComparison
    return Comparison


def sprt_from_matches(matches: pd.DataFrame, settings: Mapping[str, Any]) -> Comparison:
    """Recompute a comparison from stored matches (for the report): `Comparison.from_rows`."""
    return comparison_class(settings).from_rows(matches.to_dict("records"), settings)
