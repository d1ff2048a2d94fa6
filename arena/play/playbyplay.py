"""A readable play-by-play of a match, from the referee's events (``arena match``, ``arena replay``)."""

from __future__ import annotations

from typing import Any

from ..game import card_str, cards_of


class PlayByPlay:
    """Prints each deal's hands, every action and each deal's result as they happen."""

    def __init__(self, names: list[str]):
        self.names = names
        self.width = max(len(n) for n in names)

    def event(self, kind: str, data: dict[str, Any]) -> None:
        n = self.names
        if kind == "deal_start":
            st = data["state"]
            hands = " | ".join(f"{n[s]}: {' '.join(card_str(c) for c in cards_of(st.hand[s]))}" for s in (0, 1))
            print(
                f"deal {data['deal']}: {n[st.dealer]} deals, trump {'CDHS'[st.trump]} (turn-up {card_str(st.turn_up)})"
            )
            print(f"  {hands}")
        elif kind == "action":
            print(f"  {n[data['seat']]:<{self.width}}  {data['action']}")
        elif kind == "deal_end":
            r = data["result"]
            score = "-".join(map(str, data["score"]))
            if r.winner is None:
                print(f"  -> drawn hand ({r.points[0]}-{r.points[1]}); score {score}")
            else:
                print(
                    f"  -> {n[r.winner]} wins {r.game_points} game point{'s' * (r.game_points > 1)} "
                    f"({r.reason}; card points {r.points[0]}-{r.points[1]}); score {score}"
                )
        elif kind == "forfeit":
            print(f"  !! {n[data['seat']]} faulted: {data['code']}: {data['detail']}")
