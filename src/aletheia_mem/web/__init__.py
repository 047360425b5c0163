"""The owner's web UI: server-rendered pages on the JSON API's operations, served at ``/``."""
