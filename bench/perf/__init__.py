"""Speed and memory benchmarks: each regenerates its own block of docs/performance.md."""
