"""The exact routing model (MILP and CP-SAT), its warm start and its diagnosis."""

import pytest

from formulations.routing import (ROUTERS, FabricView, build_routing_model, route_model,
                                  route_negotiated, route_nets)
from formulations.routing.model import REGION_MARGIN, _fewest_links
from formulations.solver import SolveSettings, solve_model_file
from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node
from pipeline.options import RunOptions
from pipeline.budget import RunPlan
from pipeline.rdu.section_pass import map_section
from sim.check import check_section


def fanout_graph(sinks, separate_nets=False):
    nodes = [Node("d", unit="pcu")] + [Node(f"s{i}", unit="any") for i in range(sinks)]
    edges = [Edge("d", f"s{i}", net=f"n{i}" if separate_nets else None) for i in range(sinks)]
    return Graph("fan", nodes, edges)


def spread_placement(tiny, g):
    sites = [s.id for s in tiny.sites_of("any")]
    placement = {"d": "U0_0"}
    rest = [s for s in reversed(sites) if s != "U0_0"]
    for i, n in enumerate(n for n in g.node_ids if n != "d"):
        placement[n] = rest[i]
    return placement


@pytest.mark.parametrize("backend", ["highs", "cp-sat"])
def test_multi_sink_net_is_an_optimal_tree(tiny, backend):
    g = fanout_graph(4)
    placement = spread_placement(tiny, g)
    warm = route_negotiated(g, tiny, placement)
    out = route_model(g, tiny, placement, SolveSettings(backend, time_limit=20, seed=0))
    report = check_section(g, tiny, placement, out.paths)
    assert report.ok, report.violations
    assert out.success and out.wirelength <= warm.wirelength
    assert report.wirelength == out.wirelength
    assert out.bound == pytest.approx(out.wirelength) and out.extra["gap"] == 0.0


def test_unroutable_bottleneck_is_diagnosed(tiny):
    # a unit has 4 out-links of 2 vector channels: 9 separate nets cannot leave it
    g = fanout_graph(9, separate_nets=True)
    placement = spread_placement(tiny, g)
    out = route_model(g, tiny, placement, SolveSettings("highs", time_limit=20, seed=0))
    assert not out.success
    assert out.extra["proven_unroutable"]
    assert any(o.link.startswith("U0_0->") for o in out.overused)
    assert all(o.load > o.capacity for o in out.overused)


def test_section_failure_names_links_for_the_feedback_loop(tiny):
    g = fanout_graph(9, separate_nets=True)
    options = RunOptions(placer="model", router="model", time_limit=5)
    outcome = map_section(g, tiny, 0, options, lambda line: None, _plan(options))
    assert outcome.failure is not None and outcome.failure.level == "routing"
    assert outcome.failure.overused and "over capacity" in outcome.failure.message


def test_map_section_with_models_passes_the_checker(tiny):
    g = Graph("g", [Node("a", unit="pcu"), Node("b", unit="pmu"), Node("c", unit="pcu"),
                    Node("d", unit="pmu")],
              [Edge("a", "b"), Edge("a", "c"), Edge("c", "d"), Edge("b", "d", bandwidth=0.5)])
    options = RunOptions(placer="model", router="model", time_limit=5)
    outcome = map_section(g, tiny, 0, options, lambda line: None, _plan(options))
    assert outcome.failure is None
    assert check_section(g, tiny, outcome.placement, outcome.paths).ok


def test_routing_mps_round_trip(tiny, tmp_path):
    g = fanout_graph(3)
    placement = spread_placement(tiny, g)
    fab = FabricView(tiny)
    nets = route_nets(g, fab, placement, {}, margin=1)
    model, *_ = build_routing_model(fab, nets, {})
    model.write_mps(str(tmp_path / "routing.mps"))
    direct = model.solve(backend="cp-sat", time_limit=20, seed=0)
    from_file = solve_model_file(tmp_path / "routing.mps", backend="highs", time_limit=20)
    assert direct.status.name == from_file.status.name == "OPTIMAL"
    assert direct.objective == pytest.approx(from_file.objective)


def test_registry_names():
    assert set(ROUTERS) == {"negotiated", "model"}


def test_model_router_uses_the_backend_as_given(tiny):
    """No silent swap: the backend of the settings is the one that solves."""
    g = fanout_graph(2)
    placement = spread_placement(tiny, g)
    for backend in ("cp-sat", "highs"):
        out = ROUTERS["model"](g, tiny, placement, SolveSettings(backend, time_limit=10))
        assert out.backend == backend and out.method == f"routing model ({backend})"


def test_negotiated_router_takes_the_router_signature(tiny):
    g = fanout_graph(3)
    placement = spread_placement(tiny, g)
    lines = []
    out = ROUTERS["negotiated"](g, tiny, placement, SolveSettings(), progress=lines.append)
    assert out.success and lines and lines[0].startswith("routing iteration 1")


def test_pictures_draw_nets_and_congestion(tmp_path):
    """The default pipeline (models) maps the README example; three pictures per section."""
    from pathlib import Path
    from model.importers import load_graph
    from pipeline.flow import map_graph
    from pipeline.pictures import draw_mapping
    example = Path(__file__).resolve().parents[2] / "examples" / "fig9.json"
    spec = load_hardware("plasticine")
    mapping = map_graph(load_graph(example), spec, RunOptions(time_limit=2))
    names = draw_mapping(mapping, build_fabric(spec), tmp_path, "svg")
    assert {"section0.svg", "section0_nets.svg", "section0_congestion.svg"} <= set(names)
    assert all((tmp_path / n).read_text().lstrip().startswith("<?xml") for n in names)


def corridor_graph(nets):
    """``nets`` separate nets from one unit to another three columns away."""
    return Graph("corridor", [Node("a", unit="any"), Node("b", unit="any")],
                 [Edge("a", "b", net=f"n{i}") for i in range(nets)])


@pytest.mark.parametrize("backend", ["highs", "cp-sat"])
def test_region_grows_when_the_box_is_too_small(tiny, backend):
    # the box of U1_0 and U1_3 (margin 0) holds switch rows 1 and 2: 2 rows x 2 channels
    # carry 4 nets east; 6 nets need a third row, outside the box
    placement = {"a": "U1_0", "b": "U1_3"}
    out = route_model(corridor_graph(6), tiny, placement,
                      SolveSettings(backend, time_limit=20, seed=0), margin=0, warm_start=False)
    assert out.success, out.overused
    assert out.extra["region_margins"][0] == 0 and len(out.extra["region_margins"]) >= 2
    assert check_section(corridor_graph(6), tiny, placement, out.paths).ok


def test_region_stays_small_when_the_box_suffices(tiny):
    placement = {"a": "U1_0", "b": "U1_3"}
    out = route_model(corridor_graph(4), tiny, placement,
                      SolveSettings("highs", time_limit=20, seed=0), margin=0, warm_start=False)
    assert out.success and out.extra["region_margins"] == [0]
    assert out.wirelength == 4 * 4


def test_a_settled_section_is_proven_without_a_solve(tiny):
    # four nets of shortest trees, no link over capacity: nothing routes them in fewer links
    placement = {"a": "U1_0", "b": "U1_3"}
    out = route_model(corridor_graph(4), tiny, placement, SolveSettings("highs", time_limit=20))
    assert out.success and out.wirelength == 4 * 4
    assert out.extra["chunks"] == 1 and out.extra["chunks_solved"] == 0
    assert out.bound == out.wirelength and out.extra["gap"] == 0.0


def one_net(root: str, sinks: list[str]) -> tuple[Graph, dict[str, str]]:
    """One net from a unit at ``root`` to units at ``sinks``, and its placement."""
    graph = Graph("net", [Node("d", unit="pcu")] + [Node(f"s{i}", unit="any")
                                                    for i in range(len(sinks))],
                  [Edge("d", f"s{i}", net="n") for i in range(len(sinks))])
    return graph, {"d": root} | {f"s{i}": site for i, site in enumerate(sinks)}


def test_a_branching_net_at_its_fewest_links_is_proven_without_a_solve(tiny):
    # U1_1 to three corners: the warm tree of 8 links branches early, twice the hops (4)
    # to its farthest sink, and no tree has fewer; a warm tree above the fewest is solved
    settings = SolveSettings("highs", time_limit=20, seed=0)
    graph, placement = one_net("U1_1", ["U0_0", "U3_3", "U0_3"])
    out = route_model(graph, tiny, placement, settings)
    assert out.wirelength == 8 and out.extra["chunks_solved"] == 0
    assert out.bound == out.wirelength and out.extra["gap"] == 0.0
    graph, placement = one_net("U0_0", ["U3_0", "U0_3", "U3_3"])
    longer = route_model(graph, tiny, placement, settings)
    assert longer.extra["warm_start_wirelength"] == 12 and longer.extra["chunks_solved"] == 1
    assert longer.wirelength == longer.bound == 10


def test_fewest_links_is_the_exact_models_optimum_of_a_net_alone(tiny):
    fab = FabricView(tiny)
    settings = SolveSettings("highs", time_limit=20, seed=0)
    for root, sinks in (("U0_0", ["U3_3", "U0_3"]), ("U1_1", ["U0_0", "U3_3"]),
                        ("U2_1", ["U0_0", "U0_3", "U3_3", "U3_0"]),
                        ("U0_2", ["U1_0", "U3_1", "U2_3"])):
        graph, placement = one_net(root, sinks)
        cold = route_model(graph, tiny, placement, settings, warm_start=False)
        [net] = route_nets(graph, fab, placement, {}, REGION_MARGIN)
        assert cold.bound == cold.wirelength == _fewest_links(fab, net)


def test_a_legal_routing_is_not_re_solved_chunk_by_chunk(tiny, monkeypatch):
    # chunks of a legal warm start could only shorten it, proving nothing: they are skipped;
    # chunks of an illegal one are solved until it is legal
    monkeypatch.setattr("formulations.routing.model.MAX_ROUTE_VARS", 30)
    g = fanout_graph(4, separate_nets=True)
    placement = spread_placement(tiny, g)
    settings = SolveSettings("highs", time_limit=20, seed=0)
    legal = route_model(g, tiny, placement, settings)
    assert legal.success and legal.extra["warm_start_success"]
    assert legal.extra["chunks"] > 1 and legal.extra["chunks_solved"] == 0
    assert check_section(g, tiny, placement, legal.paths).ok
    cold = route_model(g, tiny, placement, settings, warm_start=False)
    assert cold.success and cold.extra["chunks_solved"] == cold.extra["chunks"] > 1
    assert check_section(g, tiny, placement, cold.paths).ok


def _plan(options: RunOptions):
    """Placement and routing settings of 5 s each, as the pipeline plans them."""
    budget = RunPlan(60.0)
    return (budget.settings(options, "placement", 5.0), budget.settings(options, "routing", 5.0))
