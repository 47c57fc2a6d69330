"""The placement seed study: its statistics and its rows."""

import pytest

from benchmarks.suites.placement import INSTANCES, proven_optimum
from benchmarks.suites.placement_seeds import (ROWS, SUITE, cost_summary, model_gain,
                                               placement_instance)
from formulations.placement import SITE_MODEL_NODES, place_greedy
from formulations.solver import SolveSettings


def test_gain_of_means_has_an_interval_around_it():
    annealing, model = [10.0, 12.0, 11.0, 9.0], [9.0, 10.0, 9.5, 9.5]
    gain = model_gain(annealing, model)
    assert gain["gain_means"] == pytest.approx(1 - 9.5 / 10.5, abs=1e-4)
    low, high = (float(x.strip().rstrip("%")) / 100 for x in gain["gain_interval"].split("–"))
    assert low < gain["gain_means"] < high
    assert gain["gain_medians"] == pytest.approx(1 - 9.5 / 10.5, abs=1e-4)
    stats = cost_summary("m", model)
    assert stats["m_mean"] == 9.5 and stats["m_median"] == 9.5 and stats["m_sem"] > 0


def test_identical_runs_have_no_gain_and_a_zero_width_interval():
    gain = model_gain([5.0, 5.0, 5.0], [5.0, 5.0, 5.0])
    assert gain["gain_means"] == 0 and gain["gain_interval"] == "0.0% – 0.0%"


def test_rows_name_placement_instances_and_backends():
    instances = {(label, params["preset"]) for label, _, params in INSTANCES}
    assert all((label, preset) in instances and backend in ("cp-sat", "highs")
               for label, preset, backend in ROWS)
    assert len(SUITE.entries(True)) == 1 and len(SUITE.entries(False)) == len(ROWS)


def test_a_label_cut_for_two_presets_runs_on_the_preset_of_its_row():
    # bert_l-3_training s0 is a placement instance on plasticine and on sn10
    for preset in ("plasticine", "sn10"):
        _, params = placement_instance("bert_l-3_training s0", preset)
        assert params["preset"] == preset
    entry = next(e for e in SUITE.entries(False) if e.fixed["instance"] == "bert_l-3_training s0")
    assert entry.fixed["preset"] == entry.params["preset"] == "plasticine"


def test_small_sections_get_their_proven_optimum(tiny):
    from tests.formulations.test_placement_model import exhaustive_optimum, star_graph
    g = star_graph()
    greedy = place_greedy(g, tiny, g.node_ids, SolveSettings())
    optimum, seconds = proven_optimum(g, tiny, [greedy])
    assert optimum == pytest.approx(exhaustive_optimum(g, tiny)) and seconds >= 0


def test_larger_sections_get_no_optimum(plasticine):
    from tests.formulations.test_placement_cp import small_graph
    g = small_graph(SITE_MODEL_NODES + 1, 3)
    greedy = place_greedy(g, plasticine, g.node_ids, SolveSettings())
    assert proven_optimum(g, plasticine, [greedy]) == (None, None)
