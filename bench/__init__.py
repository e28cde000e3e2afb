"""Benchmarks and studies of pdf-airlock, run from the project root as modules:
``python -m bench.<folder>.<name>`` (bench/README.md lists them)."""
