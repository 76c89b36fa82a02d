"""Does nothing: the harness-overhead benchmark's agent."""
