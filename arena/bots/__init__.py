"""Strategies of the bundled agents: random and greedy, the heuristic, the expert's search, and
the table strategies of the three- and four-handed games (`table_strategies`)."""
