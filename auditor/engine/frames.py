"""Moved to auditor/frames.py (the checks use it, and they must not import the engine);
kept for the modules that still import it from here."""

from auditor.frames import join

__all__ = ["join"]
