"""Metrics of review text: readability, cross-references and citations, and the batch kernel that scores them."""
