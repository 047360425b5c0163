"""The team hub: ``aletheia-sync`` serves MCP and the sync API to bearer tokens."""
