"""Capture hooks run by coding tools (``aletheia-hook``): fast, quiet, and failing open."""
