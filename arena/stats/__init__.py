"""Statistics: ratings with intervals, the SPRT and its plan, margins. Pure numerics."""
