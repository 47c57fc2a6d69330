"""Cost models of a placed and routed section (source 002)."""

from formulations.placement.cost_models.analytic import (AnalyticEstimate, analytic_estimate,
                                                         predict_normalised)

__all__ = ["AnalyticEstimate", "analytic_estimate", "predict_normalised"]
