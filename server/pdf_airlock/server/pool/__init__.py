"""pool."""
