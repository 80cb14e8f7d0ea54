"""Worked examples of custom Python strategies (see strategies/custom.py for the protocol)."""
