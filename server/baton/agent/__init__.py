"""The agent loop: what the model is sent (context, framing, blocks), the turn, tokens, prompts."""
