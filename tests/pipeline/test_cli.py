"""The command line end to end: outputs, exit codes, messages."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from model.graph import Edge, Graph, Node
from model.mapping import read_mapping
from model.importers import load_graph
from hardware import build_fabric, load_hardware
from pipeline.run import main
from sim.check import check_section
from tests.conftest import real_graph

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "fig9.json"


def run(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def recheck(mapping_path, graph):
    """Re-judge a written mapping.json with the checker, section by section.

    Stage-buffer units inserted on an edge (``via_buffers``) are rebuilt as the
    chain src -> buffer ... -> dst, the edge's links split at the buffer sites.
    """
    mapping = read_mapping(mapping_path)
    fabric = build_fabric(load_hardware(mapping.hardware))
    for section in mapping.sections:
        members = set(section["nodes"])
        buffers = [n for n, p in mapping.placement.items()
                   if p["section"] == section["id"] and n not in members]
        nodes = [graph.node(n) for n in section["nodes"]] + [Node(b, unit="pmu") for b in buffers]
        edges, routes = [], {}
        for r in mapping.routes:
            if r.get("section") != section["id"]:
                continue
            hops = [r["src"]] + r.get("via_buffers", []) + [r["dst"]]
            links = list(r["links"])
            for a, b in zip(hops, hops[1:]):
                end = mapping.placement[b]["site"]
                cut = next(k for k, link in enumerate(links) if link.split("->")[1] == end) + 1
                routes[len(edges)] = links[:cut]
                links = links[cut:]
                # hops of one buffer chain are shared by the net's sinks: one net per hop start
                net = r["net"] if len(hops) == 2 else f"chk:{a}:{hops[1]}"
                edges.append(Edge(a, b, net=net,
                                  attrs={"network": graph.edges[r["edge"]].network}))
        sub = Graph("recheck", nodes, edges)
        placement = {n.id: mapping.placement[n.id]["site"] for n in nodes}
        report = check_section(sub, fabric, placement, routes)
        assert report.ok, report.violations[:5]
    return mapping


def test_example_maps_and_writes_everything(tmp_path, capsys):
    code, _, err = run([EXAMPLE, "--out", tmp_path], capsys)
    assert code == 0
    assert str(tmp_path.resolve()) in err
    mapping = recheck(tmp_path / "mapping.json", load_graph(EXAMPLE))
    assert mapping.status == "mapped"
    assert sorted(mapping.order) == sorted(load_graph(EXAMPLE).node_ids)
    assert mapping.order[:4] == ["IN0", "GRAD0", "LOSS0", "B0"]
    assert {s["stage"] for s in mapping.stages} == {"sections", "buffers", "order", "placement",
                                                     "routing", "performance"}
    assert len(mapping.routes) == 17 and len(mapping.buffers) == 17
    report = (tmp_path / "report.md").read_text()
    assert "Status: mapped" in report and "section0.svg" in report
    assert (tmp_path / "section0.svg").read_text().lstrip().startswith("<?xml")


def test_quiet_prints_nothing(tmp_path, capsys):
    code, out, err = run([EXAMPLE, "--out", tmp_path, "--quiet", "--no-pictures"], capsys)
    assert code == 0 and out == "" and err == ""


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"version": 1, "nodes": [{"id": "a"}], "edges": [{"src": "a", "dst": "zz"}]}',
     'edges[0].dst: node "zz" does not exist'),
])
def test_bad_graph_exits_2_with_the_place(tmp_path, capsys, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, _, err = run([path, "--out", tmp_path / "o"], capsys)
    assert code == 2 and needle in err and str(path) in err
    assert "Traceback" not in err


def test_unknown_hardware_lists_presets(tmp_path, capsys):
    code, _, err = run([EXAMPLE, "--hardware", "nope", "--out", tmp_path], capsys)
    assert code == 2 and "plasticine" in err


def test_unknown_backend(tmp_path, capsys):
    code, _, err = run([EXAMPLE, "--backend", "nope", "--out", tmp_path], capsys)
    assert code == 2 and "--backend" in err and "cp-sat" in err


@pytest.mark.parametrize("option", ["--tile-pmus", "--af-latency"])
def test_bad_counts_exit_2(tmp_path, capsys, option):
    code, _, err = run([EXAMPLE, option, "0", "--out", tmp_path], capsys)
    assert code == 2 and option in err and "Traceback" not in err


def test_could_not_map_exits_3_with_diagnosis(tmp_path, capsys):
    graph = {"version": 1, "nodes": [{"id": "big", "pcu": 500}], "edges": []}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(graph))
    code, _, err = run([path, "--out", tmp_path / "o"], capsys)
    assert code == 3 and '"big"' in err
    written = json.loads((tmp_path / "o" / "mapping.json").read_text())
    assert written["status"] == "failed" and '"big"' in written["diagnosis"]
    assert "Status: failed" in (tmp_path / "o" / "report.md").read_text()


def test_streaming_engine_run_writes_tiles(tmp_path, capsys):
    code, _, err = run([EXAMPLE, "--hardware", "se16", "--out", tmp_path, "--time-limit", "20"],
                       capsys)
    assert code == 0, err
    mapping = json.loads((tmp_path / "mapping.json").read_text())
    assert mapping["status"] == "mapped" and 1 <= mapping["ii"] <= 6
    assert all({"tile", "slot"} <= set(p) for p in mapping["placement"].values())
    assert "tiles.svg" in (tmp_path / "report.md").read_text()


def test_kernel_over_96_instructions_splits_with_the_given_af_latency(tmp_path, capsys):
    n = 100                                    # more instructions than 16 tiles x 6 slots
    graph = {"version": 1, "nodes": [{"id": f"n{i}"} for i in range(n)],
             "edges": [{"src": f"n{i}", "dst": f"n{i + 1}"} for i in range(n - 1)]}
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(graph))
    # 2 s of planned work, the deadline far: a loaded machine does the same work later
    code, _, err = run([path, "--hardware", "se16", "--af-latency", "20", "--time-limit", "60",
                        "--work", "2", "--out", tmp_path / "o", "--no-pictures"], capsys)
    assert code == 0, err
    mapping = json.loads((tmp_path / "o" / "mapping.json").read_text())
    af = [r for r in mapping["routes"] if r.get("via") == "af"]
    assert af and all(r["latency"] == 20 for r in af)
    assert len({p["sdf"] for p in mapping["placement"].values()}) >= 2


def test_cgra_target_maps_end_to_end(tmp_path, capsys):
    code, _, err = run([EXAMPLE, "--hardware", "cgra4x4", "--time-limit", "5", "--out", tmp_path,
                        "--no-pictures"], capsys)
    assert code == 0, err
    mapping = json.loads((tmp_path / "mapping.json").read_text())
    assert mapping["ii"] >= 1 and all(len(p["pe"]) == 2 for p in mapping["placement"].values())
    assert all(r["steps"] for r in mapping["routes"])


def test_module_entry_point_runs(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pipeline.run", str(EXAMPLE), "--out",
                             str(tmp_path), "--no-pictures"], capture_output=True, text=True,
                            cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "--hardware" in subprocess.run([sys.executable, "-m", "pipeline.run", "--help"],
                                          capture_output=True, text=True, cwd=REPO).stdout


def test_a_run_without_pictures_or_pyomo_backends_loads_neither(tmp_path):
    """matplotlib and Pyomo take 0.3-0.4 s each to import: a run that needs neither is
    spared them (the default backends, --no-pictures)."""
    probe = ("import sys; from pipeline.run import main; "
             f"main([{str(EXAMPLE)!r}, '--out', {str(tmp_path)!r}, '--no-pictures', '--quiet']); "
             "print(sorted(m for m in ('matplotlib', 'pyomo') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_real_resnet50_operator_graph_maps(tmp_path, capsys):
    path = real_graph("msr-dnn/OperatorGraphs/resnet50_inference.json")
    code, _, err = run([path, "--out", tmp_path, "--no-pictures", "--time-limit", "10"], capsys)
    assert code == 0, err
    mapping = recheck(tmp_path / "mapping.json", load_graph(path))
    assert mapping.metrics["sections"] >= 5        # 604 nodes on 128 sites
    # weights over 256 KiB take several PMUs: their banks are placed like any unit
    banks = [n for n in mapping.placement if "#pmu" in n]
    assert banks and sum(s["bank_units"] for s in mapping.sections) == len(banks)
    assert all(r["links"] or r.get("via") == "dram" for r in mapping.routes)
