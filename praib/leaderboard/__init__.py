"""Leaderboard of LLM reviewers: submissions, full scored runs with bootstrap intervals, and era analysis."""
