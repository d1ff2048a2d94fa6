"""A readable play-by-play of a match, from the referee's events (``arena match``, ``arena replay``)."""

from __future__ import annotations

from typing import Any

from ..game import card_str, cards_of
from ..game.cards import cards_str


class PlayByPlay:
    """Prints each deal's hands, every action (plays, marriages, bids, trumps) and each
    deal's result as they happen, for any number of seats."""

    def __init__(self, names: list[str]):
        self.names = names
        self.width = max(len(n) for n in names)

    def event(self, kind: str, data: dict[str, Any]) -> None:
        n = self.names
        if kind == "deal_start":
            st = data["state"]
            seats = data.get("seats") or tuple(range(len(n)))
            if hasattr(st, "turn_up"):  # two-handed (also a dealer-sits-out deal)
                hands = " | ".join(f"{n[seats[s]]}: {' '.join(card_str(c) for c in cards_of(st.hand[s]))}"
                                   for s in range(2))  # fmt: skip
                out = f" ({n[seats[st.dealer ^ 1]]} and {n[seats[st.dealer]]} play)" if len(n) == 3 else ""
                print(
                    f"deal {data['deal']}: {n[seats[st.dealer]]} deals{out}, trump {'CDHS'[st.trump]} "
                    f"(turn-up {card_str(st.turn_up)})"
                )
            else:
                hands = " | ".join(f"{n[s]}: {' '.join(cards_str(st.hand[s]))}" for s in range(st.players))
                trump = f", trump {'CDHS'[st.trump]}" if st.trump >= 0 else ", trumps not set yet"
                print(f"deal {data['deal']}: {n[st.dealer]} deals{trump}")
            print(f"  {hands}")
        elif kind == "action":
            print(f"  {n[data['seat']]:<{self.width}}  {data['action']}")
        elif kind == "deal_end":
            r = data["result"]
            score = "-".join(f"{x:g}" for x in data["score"])
            seats = data.get("seats") or tuple(range(len(n)))
            pts = "-".join(map(str, r.points))
            if hasattr(r, "scores"):  # a table deal: per side
                gains = ", ".join(f"{x:+g}" for x in r.scores)
                print(f"  -> {r.reason}; card points {pts}; this deal {gains}; score {score}")
            elif r.winner is None:
                print(f"  -> drawn hand ({pts}); score {score}")
            else:
                print(
                    f"  -> {n[seats[r.winner]]} wins {r.game_points} game point{'s' * (r.game_points > 1)} "
                    f"({r.reason}; card points {pts}); score {score}"
                )
        elif kind == "forfeit":
            print(f"  !! {n[data['seat']]} faulted: {data['code']}: {data['detail']}")
