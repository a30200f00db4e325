"""tailcast.traces."""
