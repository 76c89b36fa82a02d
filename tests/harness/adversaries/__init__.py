"""Standard-library agents that act as a cheating model would; each says what it attacks."""
