"""Perturbations of papers, reviews and rebuttals, and counterfactual papers (``praib.perturb``).

Each perturbation maps a record to a perturbed record plus a description of
the edit; see the project issues for the plan.
"""
