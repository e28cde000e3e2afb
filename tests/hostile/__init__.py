"""Hostile PDF classes, generated in code (tests/hostile/generate.py)."""
