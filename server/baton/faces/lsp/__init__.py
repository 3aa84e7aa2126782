"""The pygls face: JSON-RPC over LSP framing, one module per feature area."""
