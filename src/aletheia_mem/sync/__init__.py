"""Sync of local stores through a team hub: record checks, the client, the engine."""
