"""The metric algorithms, grouped: text, scores and agreement, judged, and perturbation statistics."""
