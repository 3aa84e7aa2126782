"""Sessions: the service faces call, the agent loop, and the message model."""
