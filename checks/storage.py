"""DSK: storage and JBOD (incident 2)."""
