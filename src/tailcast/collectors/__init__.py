"""tailcast.collectors."""
