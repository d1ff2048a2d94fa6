"""The results store and the standings read from it."""
