"""Baton: an agent-session server for editors."""

__version__ = "0.1.0"
