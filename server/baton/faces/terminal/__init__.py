"""What `baton run` and the demo show in a terminal: updates, the permission prompt, the status line."""
