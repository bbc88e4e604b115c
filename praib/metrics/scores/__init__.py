"""Metrics of ratings and confidences: agreement with human panels and score distributions."""
