"""Ladders: their config and rounds, their store, runner and submissions."""
