"""Aletheia: one shared memory for AI coding agents."""

__version__ = "0.4.1"
