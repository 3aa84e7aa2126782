"""Delegation: `task` children (explore, plan, build, custom agents) as sessions of their own,
each coming back as one bounded result; and a plan built step by step in fresh children."""
