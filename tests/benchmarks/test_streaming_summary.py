"""The streaming suite's summary states the cycle target against the valid lower bounds."""

from benchmarks.suites.streaming import summarize


def test_cycle_target_line_uses_the_best_bound():
    rows = [{"family": "random", "nodes": "20", "cp_status": "optimal", "cp_s": "2.0",
             "cp_lb": "30", "best_lb": "39", "any_lb": "33", "cp_cycles": "40",
             "ratio_crit": "1.33", "ratio_sib": "1.1", "ratio_best": "1.11"},
            {"family": "random", "nodes": "10", "cp_status": "optimal", "cp_s": "1.0",
             "cp_lb": "20", "best_lb": "20", "any_lb": "20", "cp_cycles": "20"}]
    line = next(x for x in summarize(rows) if "target" in x)
    assert "out of reach at the mapped II" in line        # any-II bound averages 1.05
    assert "averages 1.150 x the critical path" in line    # (39/30 + 20/20) / 2
    assert "averages 1.050 x" in line and "1.013 x the best lower bound" in line
