"""tailcast.replay."""
