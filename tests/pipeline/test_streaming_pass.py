"""map_streaming end to end: placement fields, spoke entries, report, picture, diagnosis."""

import pytest

from hardware import load_hardware
from model.graph import Edge, Graph, Node
from model.mapping import read_mapping, write_mapping
from model.importers import load_graph
from pipeline.feedback import MappingFailed
from formulations.solver import SolveSettings
from pipeline.options import RunOptions
from pipeline.pictures import draw_streaming
from pipeline.report import streaming_lines
from pipeline.streaming import map_streaming
from sim.streaming import check_split, check_streaming, distance_graph
from tests.conftest import real_graph

SE = load_hardware("se16")


def test_distance_maps_and_passes_the_simulator(tmp_path):
    m = map_streaming(distance_graph(), SE, RunOptions(time_limit=5, export_dir=str(tmp_path)))
    assert m.status == "mapped" and m.ii == 1 and m.metrics["cycles"] == 16
    assert set(m.placement["3"]) == {"tile", "slot", "cycle", "sdf"}
    assert check_streaming(distance_graph(), SE, m.placement, m.ii).ok
    assert len(m.tiles) == 16 and all(t["ii"] == 1 for t in m.tiles)
    entries = [e for t in m.tiles for e in t["entries"] if e["kind"] == "instruction"]
    assert len(entries) == 7
    assert {e["master_input"] for e in entries if e["instruction"] in "012"} == {"tile base"}
    assert m.memory["x0"]["tile"] == m.placement["0"]["tile"]
    assert m.sections == [{"id": 0, "kind": "sdf", "nodes": list("0123456"), "ii": 1, "cycles": 16}]
    assert any(s["stage"] == "check" for s in m.stages)
    assert list(tmp_path.glob("*.pb.txt"))
    lines = streaming_lines(m)
    assert "| variable | tile | bank | users |" in lines
    draw_streaming(m, SE, tmp_path / "se.png")
    assert (tmp_path / "se.png").stat().st_size > 1000


def test_failure_is_diagnosed_by_rule():
    g = Graph("ops", [Node(f"s{i}") for i in range(4)] + [Node("x")],
              [Edge(f"s{i}", "x") for i in range(4)])
    with pytest.raises(MappingFailed) as err:
        map_streaming(g, SE, RunOptions(time_limit=2))
    m = err.value.mapping
    assert m.status == "failed" and "x has 4 operands" in m.diagnosis
    assert "not mappable" in m.diagnosis and "decomposed" in m.diagnosis
    assert streaming_lines(m)[2].startswith("Not mapped")
    loop = Graph("loop", [Node("a"), Node("b"), Node("c")],
                 [Edge("a", "b"), Edge("b", "c"), Edge("c", "a", distance=1)])
    with pytest.raises(MappingFailed) as err:
        map_streaming(loop, SE, RunOptions(time_limit=2))
    assert "R2 recurrence" in err.value.mapping.diagnosis
    assert "slower over the AF" in err.value.mapping.diagnosis


def test_a_recurrence_no_split_can_map_is_diagnosed_before_any_search():
    from tests.formulations.test_streaming_split import tight_twin_loops
    with pytest.raises(MappingFailed) as err:
        map_streaming(tight_twin_loops(1), SE, RunOptions(time_limit=3))
    mapping = err.value.mapping
    assert mapping.diagnosis.startswith("R2 recurrence: the loop-carried cycle through a, b, m")
    assert "not mappable" in mapping.diagnosis and "sdfs" not in mapping.metrics
    assert not any(s["stage"] in ("warm start", "modulo placement") for s in mapping.stages)


def test_seventeen_starts_split_into_two_sdfs(tmp_path):
    g = Graph("s17", [Node(f"s{i}") for i in range(17)], [])
    m = map_streaming(g, SE, RunOptions(time_limit=2))
    assert m.status == "mapped" and m.metrics["sdfs"] == 2 and m.metrics["af_edges"] == 0
    assert sorted(s["id"] for s in m.sections) == [0, 1]
    assert {p["sdf"] for p in m.placement.values()} == {0, 1}
    assert m.sections[1]["start"] >= m.sections[0]["cycles"]
    write_mapping(m, tmp_path / "mapping.json")
    assert read_mapping(tmp_path / "mapping.json").sections == m.sections
    draw_streaming(m, SE, tmp_path / "se.png")


def test_split_kernel_records_af_edges_and_passes_the_simulator():
    g = Graph("chain100", [Node(f"a{i}") for i in range(100)],
              [Edge(f"a{i}", f"a{i + 1}") for i in range(99)])
    m = map_streaming(g, SE, RunOptions(time_limit=60, work=2.7))   # the plan fits any load
    assert m.metrics["sdfs"] >= 2 and m.metrics["af_edges"] >= 1
    af = [r for r in m.routes if r.get("via") == "af"]
    assert len(af) == m.metrics["af_edges"]
    assert all(r["src_sdf"] < r["dst_sdf"] and r["variable"].startswith("af:") for r in af)
    sections = [{"id": s["id"], "nodes": s["nodes"], "ii": s["ii"], "start": s["start"]}
                for s in m.sections]
    assert check_split(g, SE, m.placement, sections, m.metrics["af_latency"],
                       m.metrics["batch"]).ok
    assert any(line.startswith("- SDF") for line in streaming_lines(m))


def test_fan_out_gets_a_pass_tree():
    g = Graph("fan9", [Node("p")] + [Node(f"c{i}") for i in range(9)],
              [Edge("p", f"c{i}") for i in range(9)])
    m = map_streaming(g, SE, RunOptions(time_limit=3))
    assert m.status == "mapped" and m.metrics["pass_instructions"] == 1
    assert "pass.p.0" in m.placement and m.metrics["sdfs"] == 1


def test_milp_backend(tmp_path):
    m = map_streaming(distance_graph(), SE,
                      RunOptions(backends={"streaming": "highs"}, time_limit=30,
                                 export_dir=str(tmp_path)))
    assert m.ii == 1 and m.metrics["cycles"] == 16 and list(tmp_path.glob("*.mps"))


def test_real_kernel_mapped_or_explained():
    path = real_graph("morpher/cgra_me_bench/sum/main_INNERMOST_LN1_noSemiOLOAD_PartPred_DFG.xml")
    g = load_graph(path)
    try:
        m = map_streaming(g, SE, RunOptions(time_limit=5))
        assert m.status == "mapped"
    except MappingFailed as exc:
        assert exc.mapping.diagnosis


def _hardware_file(tmp_path, **changes):
    """se16 as a hardware file with ``changes`` (e.g. another instruction latency)."""
    import json

    from hardware import spec_to_dict
    data = spec_to_dict(SE) | {"name": "se16-" + "-".join(f"{k}{v}" for k, v in changes.items())}
    data |= changes
    path = tmp_path / f"{data['name']}.json"
    path.write_text(json.dumps(data))
    return path


def _exit_code(graph, hardware, out, *extra):
    from model.graphjson import write_graph
    from pipeline.run import main

    path = out.parent / f"{graph.name}.json"
    write_graph(graph, path)
    return main([str(path), "--hardware", str(hardware), "--out", str(out), "--no-pictures",
                 "--quiet", *extra])


@pytest.mark.parametrize("latency", [4, 5])
def test_instruction_latency_comes_from_the_hardware_file(tmp_path, latency):
    spec = load_hardware(_hardware_file(tmp_path, instruction_latency=latency))
    assert spec.instruction_latency == latency
    m = map_streaming(distance_graph(), spec, RunOptions(time_limit=5))
    assert check_streaming(distance_graph(), spec, m.placement, m.ii).ok
    assert m.metrics["cycles"] > 16          # every instruction takes longer than on se16
    assert m.metrics["cycles"] == m.metrics["cycles_sim"]
    g = Graph("fan9", [Node("p")] + [Node(f"c{i}") for i in range(9)],
              [Edge("p", f"c{i}") for i in range(9)])    # a pass tree: its latency too
    assert map_streaming(g, spec, RunOptions(time_limit=3)).metrics["pass_instructions"] == 1
    assert _exit_code(distance_graph(), _hardware_file(tmp_path, instruction_latency=latency),
                      tmp_path / "out") == 0


def test_split_kernel_on_other_latencies_passes_the_simulator(tmp_path):
    hardware = _hardware_file(tmp_path, instruction_latency=4, af_latency=20)
    spec = load_hardware(hardware)
    g = Graph("s17", [Node(f"s{i}") for i in range(17)] + [Node("t"), Node("u")],
              [Edge("s0", "t"), Edge("t", "u")])
    m = map_streaming(g, spec, RunOptions(time_limit=2))
    assert m.metrics["sdfs"] >= 2 and m.metrics["af_latency"] == 20
    sections = [{"id": s["id"], "nodes": s["nodes"], "ii": s["ii"], "start": s["start"]}
                for s in m.sections]
    assert check_split(g, spec, m.placement, sections, 20, m.metrics["batch"]).ok
    overridden = map_streaming(g, spec, RunOptions(time_limit=2, af_latency=30))
    assert overridden.metrics["af_latency"] == 30
    assert _exit_code(g, hardware, tmp_path / "out") == 0


def test_a_split_is_a_feedback_round_of_the_cut_level():
    import time

    from pipeline.feedback import ErrorCode, ErrorHandlingData, MappingError, run_levels
    from pipeline.streaming import (ScheduleLevel, StreamingCheckLevel, StreamingCutLevel,
                                    StreamingState)

    class OneSdfFails(ScheduleLevel):          # as when one SDF runs out of time
        def _one_sdf(self, state, plan):
            raise MappingError(ErrorHandlingData(
                ErrorCode.INSUFFICIENT_RESOURCES, self.name, "T0 time limit: forced",
                first_failed=0, hints={"reasons": ["T0 time limit: forced"]}))

    chain = Graph("chain6", [Node(f"n{i}") for i in range(6)],
                  [Edge(f"n{i}", f"n{i + 1}") for i in range(5)])
    state = StreamingState(chain, SE, SolveSettings("cp-sat", 2.0),
                           SE.af_latency, lambda line: None, time.perf_counter())
    run_levels(state, [StreamingCutLevel(), OneSdfFails(), StreamingCheckLevel()], 30)
    assert [(t["level"], t["fixed_by"]) for t in state.trace] == [("schedule", "cut")]
    assert state.trace[0]["change"].startswith("split into 2 SDFs")
    assert len(state.split.schedules) == 2 and state.report.ok
    m = map_streaming(chain, SE, RunOptions(time_limit=2))
    assert m.trace == [] and m.metrics["feedback_rounds"] == 0 and m.metrics["sdfs"] == 1


def test_a_split_that_meets_its_recurrence_floor_has_its_ii_proven():
    """101 instructions (more than se16's 96 slots) split into SDFs; the twin loops at
    distance 2 need II >= 3 by RecMII but have no mapping at II 3 even alone (floor 4), and
    the loop lives in one SDF in every mapping: the split at II 4 is proven minimal, and the
    bound shown is that floor, not the whole kernel's ResMII (7), which bounds only one SDF."""
    nodes = [Node(n) for n in ("p", "a", "b", "m", "out")] + [Node(f"c{i}") for i in range(96)]
    edges = [Edge("p", "a"), Edge("p", "b"), Edge("a", "m"), Edge("b", "m"), Edge("a", "out"),
             Edge("m", "a", distance=2), Edge("m", "b", distance=2), Edge("out", "c0")]
    edges += [Edge(f"c{i}", f"c{i + 1}") for i in range(95)]
    m = map_streaming(Graph("twins_and_chain", nodes, edges), SE,
                      RunOptions(time_limit=120, work=18))      # the plan fits any load
    assert m.metrics["sdfs"] >= 2 and m.metrics["rec_ii"] == 3
    assert m.metrics["recurrence_floor"] == 4 == m.ii
    assert m.metrics["proven_ii"] is True and m.metrics["ii_lower_bound"] == 4
