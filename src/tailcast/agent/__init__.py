"""tailcast.agent."""
