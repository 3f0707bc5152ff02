"""MSK: Amazon MSK limits."""
