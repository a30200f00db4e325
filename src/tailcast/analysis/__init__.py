"""tailcast.analysis."""
