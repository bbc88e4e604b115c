"""Scoring a set of reviews: every metric per group against the human reference, and the judged pass."""
