"""`baton …` on the command line: serve, run, sessions, doctor, model, demo."""
