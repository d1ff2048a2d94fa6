"""Ratings from team results and orders of finish (arena.stats.table_rating): the model
against Bradley-Terry where they coincide, recovery and coverage on simulated pools of
known strengths, and cross-checks against independent implementations (choix's
Plackett-Luce, scikit-learn's logistic regression)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.stats.rating import ELO, Z95, fit_matrix
from arena.stats.table_rating import (
    Choices,
    TableResults,
    aggregate,
    fit_choices,
    fit_table_counts,
    order_choices,
    pairwise_wins,
    solve,
    team_choices,
)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simulate_teams(rng: np.random.Generator, elo: np.ndarray, matches: int):
    """Partnership matches: four distinct agents, teams (a, c) against (b, d), the team
    of the larger summed rating winning more often."""
    n = len(elo)
    teams, winners = [], []
    for _ in range(matches):
        a, b, c, d = rng.choice(n, 4, replace=False)
        p = _sigmoid((elo[a] + elo[c] - elo[b] - elo[d]) / ELO)
        teams.append([[a, c], [b, d]])
        winners.append(0 if rng.random() < p else 1)
    return teams, winners


def simulate_orders(rng: np.random.Generator, elo: np.ndarray, matches: int, seats: int = 3):
    """Three-handed orders of finish drawn from Plackett-Luce with the true strengths."""
    n = len(elo)
    out_seats, out_places = [], []
    for _ in range(matches):
        agents = list(rng.choice(n, seats, replace=False))
        left, order = list(agents), []
        while left:
            w = np.exp(elo[left] / ELO)
            pick = rng.choice(len(left), p=w / w.sum())
            order.append(left.pop(pick))
        out_seats.append(agents)
        out_places.append([order.index(a) + 1 for a in agents])
    return out_seats, out_places


def counts(n, groups, first):
    games = np.zeros(n)
    wins = np.zeros(n)
    for g, f in zip(groups, first, strict=True):
        for a in g:
            games[a] += 1
        for a in f:
            wins[a] += 1
    return games, wins, games - wins


# -- where the models coincide -------------------------------------------------------------------
def test_two_sides_of_one_are_bradley_terry_to_the_last_digit():
    rng = np.random.default_rng(1)
    elo = rng.uniform(-300, 300, 6)
    W = np.zeros((6, 6))
    teams, winners = [], []
    for _ in range(400):
        i, j = rng.choice(6, 2, replace=False)
        w = 0 if rng.random() < _sigmoid((elo[i] - elo[j]) / ELO) else 1
        teams.append([[i], [j]])
        winners.append(w)
        W[(i, j) if w == 0 else (j, i)] += 1
    names = [f"a{k}" for k in range(6)]
    bt = fit_matrix(W, names)
    games, wins, losses = W.sum(1) + W.sum(0), W.sum(1), W.sum(0)
    ours = fit_choices(team_choices(teams, winners), names, games=games, wins=wins, losses=losses)
    assert np.allclose(ours.elo, bt.elo, atol=1e-7) and np.allclose(ours.se, bt.se, atol=1e-7)
    assert np.allclose(pairwise_wins(team_choices(teams, winners), 6), W)


def test_identical_choices_aggregate_to_the_same_fit():
    teams = [[[0, 2], [1, 3]]] * 5 + [[[0, 1], [2, 3]]] * 4 + [[[0, 3], [1, 2]]] * 3
    winners = [0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0]
    ch = team_choices(teams, winners)
    agg = aggregate(ch)
    assert len(agg.sides) < len(ch.sides) and agg.weight.sum() == len(winners)
    assert np.allclose(solve(ch, 4), solve(agg, 4))


def test_choices_must_be_well_formed():
    with pytest.raises(ValueError, match="same number of members"):
        Choices(np.array([[[0, 1], [2, -1]]]), np.array([0]), np.array([1.0]))
    with pytest.raises(ValueError, match="not one of its choice's sides"):
        Choices(np.array([[[0], [1], [-1]]]), np.array([2]), np.array([1.0]))


def test_shared_places_count_every_order_they_allow():
    # a and b always share first place over c: equal ratings, both above c
    ch = order_choices([[0, 1, 2]] * 30, [[1, 1, 3]] * 30)
    elo = solve(ch, 3)
    assert abs(elo[0] - elo[1]) < 1e-9 and elo[0] > elo[2] + 100
    assert np.isclose(ch.weight.sum(), 30 * 2)  # two choices a match, whatever the ties
    assert len(order_choices([[0, 1, 2]], [[2, 2, 2]]).sides) == 0  # an all-shared place says nothing


def test_a_team_that_always_wins_is_held_by_the_prior_and_flagged():
    teams = [[[0, 1], [2, 3]]] * 10
    ch = team_choices(teams, [0] * 10)
    names = ["a", "b", "c", "d"]
    games, wins, losses = counts(4, [[0, 1, 2, 3]] * 10, [[0, 1]] * 10)
    r = fit_choices(ch, names, games=games, wins=wins, losses=losses)
    assert np.all(np.isfinite(r.elo)) and r.elo[0] > r.elo[2]
    assert "won every match" in r.flags[0] and "lost every match" in r.flags[2]
    with pytest.raises(ValueError, match="use a prior > 0"):
        solve(ch, 4, prior=0)


# -- recovery and coverage -----------------------------------------------------------------------
def coverage(fit_one, pools: int, seed: int) -> tuple[float, float]:
    """Share of the 95% intervals (mean-0 ratings) that hold the true mean-0 rating, and
    the mean absolute error, over ``pools`` simulated pools."""
    rng = np.random.default_rng(seed)
    hits, total, err = 0, 0, []
    for _ in range(pools):
        true = rng.uniform(-250, 250, 8)
        true -= true.mean()
        elo, se = fit_one(rng, true)
        hits += int((np.abs(elo - true) <= Z95 * se).sum())
        total += len(true)
        err.append(np.abs(elo - true).mean())
    return hits / total, float(np.mean(err))


def test_team_ratings_recover_individual_strengths_with_honest_intervals():
    def one(rng, true):
        teams, winners = simulate_teams(rng, true, 800)
        firsts = [t[w] for t, w in zip(teams, winners, strict=True)]
        games, wins, losses = counts(8, [t[0] + t[1] for t in teams], firsts)
        r = fit_choices(team_choices(teams, winners), [str(k) for k in range(8)], games=games, wins=wins,
                        losses=losses, prior=0.1)  # fmt: skip
        return r.elo, r.se

    cov, err = coverage(one, 40, 7)
    assert 0.90 <= cov <= 0.99, cov
    assert err < 30, err  # 800 team results: mean error about 15 Elo


def test_orders_of_finish_recover_strengths_and_plackett_luce_covers_where_pairs_do_not():
    def pl(rng, true):
        seats, places = simulate_orders(rng, true, 500)
        r = fit_choices(order_choices(seats, places), [str(k) for k in range(8)], games=np.ones(8),
                        wins=np.ones(8), losses=np.zeros(8), prior=0.1, model="order")  # fmt: skip
        return r.elo, r.se

    def pairs(rng, true):  # the pairwise decomposition: three "matches" per match
        seats, places = simulate_orders(rng, true, 500)
        W = np.zeros((8, 8))
        for agents, place in zip(seats, places, strict=True):
            for i in range(3):
                for j in range(3):
                    if place[i] < place[j]:
                        W[agents[i], agents[j]] += 1
        r = fit_matrix(W, [str(k) for k in range(8)], prior=0.1)
        return r.elo, r.se

    cov_pl, err_pl = coverage(pl, 40, 11)
    cov_pairs, _ = coverage(pairs, 40, 11)
    assert 0.90 <= cov_pl <= 0.99, cov_pl
    assert err_pl < 35, err_pl  # about 17
    assert cov_pairs < cov_pl  # its intervals are too narrow for the same data


# -- independent implementations -----------------------------------------------------------------
def test_plackett_luce_agrees_with_choix():
    choix = pytest.importorskip("choix")
    rng = np.random.default_rng(5)
    true = rng.uniform(-200, 200, 6)
    seats, places = simulate_orders(rng, true, 600)
    rankings = [tuple(a for _, a in sorted(zip(p, s, strict=True))) for s, p in zip(seats, places, strict=True)]
    theirs = choix.opt_rankings(6, rankings, alpha=1e-9, method="BFGS", tol=1e-12)
    ours = solve(order_choices(seats, places), 6, prior=0) / ELO
    assert np.allclose(ours - ours.mean(), theirs - theirs.mean(), atol=1e-4)


def test_team_model_agrees_with_scikit_learn_logistic_regression():
    sk = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(9)
    true = rng.uniform(-200, 200, 8)
    teams, winners = simulate_teams(rng, true, 1500)
    X = np.zeros((len(teams), 8))
    for row, (t0, t1) in enumerate(teams):
        X[row, t0] += 1
        X[row, t1] -= 1
    y = np.array([1 - w for w in winners])  # 1: the first team won
    model = sk.LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    theirs = model.coef_[0]
    ours = solve(team_choices(teams, winners), 8, prior=0) / ELO
    assert np.allclose(ours - ours.mean(), theirs - theirs.mean(), atol=1e-4)


def test_a_line_up_is_the_same_whatever_order_its_sides_and_members_come_in():
    rng = np.random.default_rng(3)
    teams, winners = simulate_teams(rng, rng.uniform(-100, 100, 6), 300)
    shuffled = []
    flipped = []
    for (t0, t1), w in zip(teams, winners, strict=True):
        t0, t1 = list(rng.permutation(t0)), list(rng.permutation(t1))
        if rng.random() < 0.5:
            shuffled.append([t1, t0])
            flipped.append(1 - w)
        else:
            shuffled.append([t0, t1])
            flipped.append(w)
    a, b = aggregate(team_choices(teams, winners), 6), aggregate(team_choices(shuffled, flipped), 6)
    assert np.array_equal(a.sides, b.sides) and np.array_equal(a.chosen, b.chosen) and np.allclose(a.weight, b.weight)
    assert len(a.sides) < len(teams)  # 6 agents: line-ups repeat
    seats, places = simulate_orders(rng, rng.uniform(-100, 100, 5), 200)
    perm = [rng.permutation(3) for _ in seats]
    seats2 = [[s[i] for i in p] for s, p in zip(seats, perm, strict=True)]
    places2 = [[q[i] for i in p] for q, p in zip(places, perm, strict=True)]
    assert np.allclose(solve(order_choices(seats, places), 5), solve(order_choices(seats2, places2), 5))


def test_counted_table_results_fit_as_the_matches_one_by_one():
    """`fit_table_counts` on group-by rows (as rows or as columns) equals the fit of the
    matches one by one: the team model for partnerships, Plackett-Luce for places."""
    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "d", "e"]
    true = dict(zip(names, rng.normal(0, 150, 5), strict=True))
    matches = []
    for _ in range(400):
        s = list(rng.choice(names, 4, replace=False))
        p0 = 1 / (1 + 10 ** ((true[s[1]] + true[s[3]] - true[s[0]] - true[s[2]]) / 400))
        matches.append((s, 0 if rng.random() < p0 else 1))
    counted: dict[tuple, int] = {}
    for s, w in matches:
        key = (*s, "team", w, *[1 if i % 2 == w else 2 for i in range(4)])
        counted[key] = counted.get(key, 0) + 1
    cols = ("seat0", "seat1", "seat2", "seat3", "kind", "winner", "place0", "place1", "place2", "place3")
    rows = [dict(zip(cols, k, strict=True), count=c) for k, c in counted.items()]
    rows.append({"seat0": "a", "seat1": "b", "seat2": "c", "seat3": "d", "kind": "team", "winner": None, "count": 3})
    by_rows = fit_table_counts(rows, names)
    by_columns = fit_table_counts({c: [r.get(c) for r in rows] for c in (*cols, "count")}, names)
    idx = {n: i for i, n in enumerate(names)}
    one_by_one = fit_choices(
        team_choices([[[idx[s[0]], idx[s[2]]], [idx[s[1]], idx[s[3]]]] for s, _ in matches], [w for _, w in matches]),
        names, games=np.zeros(5), wins=np.zeros(5), losses=np.zeros(5),
    )  # fmt: skip
    np.testing.assert_allclose(by_rows.elo, one_by_one.elo, atol=1e-6)
    np.testing.assert_allclose(by_columns.se, one_by_one.se, atol=1e-6)
    table = by_rows.to_frame().set_index("agent")
    assert table.loc["a", "games"] == sum(1 for s, _ in matches if "a" in s) + 3  # an undecided match is played
    assert table.loc["a", "wins"] == sum(1 for s, w in matches if "a" in s[w::2])
    # three-handed places: Plackett-Luce, the same from rows as from one choice per match
    orders = [(list(rng.choice(names, 3, replace=False)), list(rng.permutation([1, 2, 3]))) for _ in range(300)]
    rows3 = [{"seat0": s[0], "seat1": s[1], "seat2": s[2], "kind": "order", "winner": p.index(1),
              "place0": p[0], "place1": p[1], "place2": p[2], "count": 1} for s, p in orders]  # fmt: skip
    want = fit_choices(order_choices([[idx[x] for x in s] for s, _ in orders], [p for _, p in orders]), names,
                       games=np.zeros(5), wins=np.zeros(5), losses=np.zeros(5))  # fmt: skip
    np.testing.assert_allclose(fit_table_counts(rows3, names).elo, want.elo, atol=1e-6)
    # raw rows read a chunk at a time (what `arena ratings` does) fit the same
    raw = [(*s, "team", w, *[1 if i % 2 == w else 2 for i in range(4)]) for s, w in matches]
    chunks = [raw[i : i + 64] for i in range(0, len(raw), 64)]
    np.testing.assert_allclose(fit_table_counts(TableResults.from_chunks(chunks, names)).elo, one_by_one.elo,
                               atol=1e-6)  # fmt: skip
    raw3 = [(*s, None, "order", p.index(1), *p, None) for s, p in orders]
    np.testing.assert_allclose(fit_table_counts(TableResults.from_chunks([raw3], names)).elo, want.elo, atol=1e-6)
