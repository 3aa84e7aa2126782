"""Reliability suites: crash, bad input, provider faults, security, load (see docs/reliability.md)."""
