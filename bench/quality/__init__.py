"""Quality benchmarks (Markdown structure, tables, OCR) beside their peers: each regenerates its
own block of docs/performance.md."""
