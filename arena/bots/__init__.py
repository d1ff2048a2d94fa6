"""Strategies of the bundled agents: random and greedy, the heuristic, the expert's search."""
