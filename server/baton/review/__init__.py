"""Review and undo: per-turn file checkpoints, reverts, and editor context in prompts.

- `store.py`: the checkpoint tables (content-addressed file versions, changes, reverts).
- `service.py`: records what the file tools change, reverts turns, serves before/after.
- `attachments.py`: reads the files and selections a prompt attaches, inside the sandbox.
"""
