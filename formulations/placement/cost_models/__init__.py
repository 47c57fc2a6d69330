"""Cost models of a placed and routed section (source 002)."""

from formulations.placement.cost_models.analytic import (AnalyticEstimate, analytic_estimate,
                                                         predict_normalised)
from formulations.placement.cost_models.features import (FeatureSet, SectionFeatures, pack,
                                                         section_features)
from formulations.placement.cost_models.learned import (CostModelConfig, CostModelEnsemble,
                                                        LearnedCostModel,
                                                        LearnedModelUnavailable, train)

__all__ = ["AnalyticEstimate", "analytic_estimate", "predict_normalised",
           "FeatureSet", "SectionFeatures", "pack", "section_features",
           "CostModelConfig", "CostModelEnsemble", "LearnedCostModel", "LearnedModelUnavailable",
           "train"]
