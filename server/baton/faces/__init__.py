"""The faces: how people and editors reach the core (LSP, ACP, the CLI and terminal, the demo)."""
