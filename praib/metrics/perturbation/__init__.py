"""Statistics of perturbed and counterfactual inputs: directional and equivalence tests, decisions, treatment effects."""
