"""THR: broker request threads and queues (incident 4)."""
