"""Tournaments and comparisons: configs and schedules, secret seeds, the runner that plays into a
store, and a comparison's reading of its pairs into the SPRT."""
