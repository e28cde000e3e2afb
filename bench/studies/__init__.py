"""Tools for a question at hand (A/B of two servers, timelines, one mechanism's cost): they print
their findings and write nothing to docs/."""
