"""The snapshot: declared tables plus a manifest, the contract between collectors and checks."""
