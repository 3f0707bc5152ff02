"""CLI: client software seen by the brokers (KIP-511)."""
