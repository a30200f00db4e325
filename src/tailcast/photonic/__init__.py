"""tailcast.photonic: the insertion-loss budget of multi-layer photonic switch chips (seed 004)."""
