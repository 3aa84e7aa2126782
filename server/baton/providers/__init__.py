"""Model providers: the OpenAI Responses API, Chat Completions, and the embedded local model."""
