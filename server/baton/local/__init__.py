"""The embedded local model: its files (`model_files`) and its in-process server (`engine`).

Kept apart from `baton.providers` so that `baton model install` and
`baton model status` work without the optional `xllamacpp` dependency: only
`engine` imports it, and only when the model is first used.
"""
