"""Compaction: triggers, pruning, the deterministic ledger, summaries, and the engine."""
