"""The tools the model is given: sandboxed files, search, shell, and the plan tools."""
