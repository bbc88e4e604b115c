"""Metrics that need a judge model: math engagement, atomic strengths/weaknesses, coverage, target/aspect labels."""
