"""Playing matches: the referee, one-off duels, the conformance suite, selfplay, play-by-play."""
