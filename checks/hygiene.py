"""CFG: configuration hygiene."""
