"""The differential harness: every job in the sandbox and in-process on a corpus
(docs/robustness.md)."""
