"""RDU fabric invariants, and distance checked against networkx shortest paths."""

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hardware import build_fabric, load_hardware, spec_from_dict, spec_to_dict
from hardware.fabric import RduFabric
from hardware.geometry import quadrant_bounds


def custom(**changes):
    """A variant of the tiny preset."""
    return spec_from_dict({**spec_to_dict(load_hardware("tiny")), "name": "custom", **changes})


# odd sizes, several arrays, the other patterns
ODD_MULTI = custom(array_rows=3, array_cols=5, arrays=[2, 3], pattern="columns")
FCMU_PAIR = custom(array_rows=4, array_cols=6, arrays=[1, 2], pattern="fcmu")
NO_AGCU = custom(agcus_per_array=0)
SPECS = [load_hardware("tiny"), load_hardware("plasticine"), ODD_MULTI, FCMU_PAIR, NO_AGCU]
IDS = ["tiny", "plasticine", "odd-multi", "fcmu-pair", "no-agcu"]


@pytest.fixture(scope="module", params=SPECS, ids=IDS)
def fab(request) -> RduFabric:
    return build_fabric(request.param)


def reference_distance(fab: RduFabric, a: str, b: str) -> int:
    """Switch-to-switch links on a networkx shortest route that relays only through switches."""
    if a == b:
        return 0
    return nx.shortest_path_length(fab.routable_view(a, b), a, b) - 2


# --- sites ------------------------------------------------------------------
def test_site_counts_match_the_spec(fab):
    spec = fab.spec
    units = [s for s in fab.sites if s.unit != "agcu"]
    assert len(units) == spec.site_count
    assert len(fab.sites_of("pcu")) == spec.pcu_count
    assert len(fab.sites_of("pmu")) == spec.pmu_count
    assert len(fab.sites_of("agcu")) == spec.agcu_count
    assert len(fab.sites_of("any")) == spec.site_count
    assert len({s.id for s in fab.sites}) == len(fab.sites)


def test_unit_sites_ids_and_positions(fab):
    for s in fab.sites:
        if s.unit == "agcu":
            continue
        assert s.id == f"U{s.row}_{s.col}"
        assert (s.x, s.y) == (s.col + 0.5, s.row + 0.5)
        assert fab.graph.nodes[s.id]["pos"] == (s.x, s.y)
        assert fab.graph.nodes[s.id]["kind"] == s.unit
        assert fab.site(s.id) is s


def test_sites_are_ordered_units_then_agcus(fab):
    kinds = [s.unit == "agcu" for s in fab.sites]
    assert kinds == sorted(kinds)
    units = [(s.row, s.col) for s in fab.sites if s.unit != "agcu"]
    assert units == sorted(units)


def test_can_host(fab):
    for s in fab.sites:
        if s.unit == "agcu":
            assert fab.can_host(s.id, "agcu") and not fab.can_host(s.id, "any")
            assert not fab.can_host(s.id, "pcu")
        else:
            assert fab.can_host(s.id, "any") and not fab.can_host(s.id, "agcu")
            assert fab.can_host(s.id, "pcu") == (s.unit in ("pcu", "fcmu"))
            assert fab.can_host(s.id, "pmu") == (s.unit in ("pmu", "fcmu"))
    with pytest.raises(ValueError):
        fab.sites_of("gpu")


def test_checkerboard_neighbours_differ():
    fab = build_fabric(load_hardware("plasticine"))
    for s in fab.sites_of("any"):
        for dr, dc in ((0, 1), (1, 0)):
            other = f"U{s.row + dr}_{s.col + dc}"
            if other in fab.graph:
                assert fab.site(other).unit != s.unit


# --- links ----------------------------------------------------------------------
def test_each_unit_links_to_its_four_corner_switches_each_way(fab):
    g = fab.graph
    for s in fab.sites_of("any"):
        corners = {f"S{s.row + dr}_{s.col + dc}" for dr in (0, 1) for dc in (0, 1)}
        assert set(g.successors(s.id)) == corners
        assert set(g.predecessors(s.id)) == corners
        assert all(g.edges[s.id, c]["kind"] == "unit" for c in corners)
        assert set(fab.attached_switches(s.id)) == corners


def test_switch_mesh_degree(fab):
    g, rows, cols = fab.graph, fab.spec.rows, fab.spec.cols
    assert len(fab.switches) == (rows + 1) * (cols + 1)
    for sw in fab.switches:
        r, c = map(int, sw[1:].split("_"))
        mesh = {f"S{r + dr}_{c + dc}" for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                if 0 <= r + dr <= rows and 0 <= c + dc <= cols}
        succ = set(g.successors(sw))
        assert {n for n in succ if fab.is_switch(n)} == mesh
        assert {n for n in g.predecessors(sw) if fab.is_switch(n)} == mesh
        units = {n for n in succ if n.startswith("U")}
        expected_units = sum(1 for dr in (-1, 0) for dc in (-1, 0)
                             if 0 <= r + dr < rows and 0 <= c + dc < cols)
        assert len(units) == expected_units <= 4
        assert g.nodes[sw]["pos"] == (float(c), float(r))


def test_agcus_link_to_two_switches_of_their_own_quadrant(fab):
    g, spec = fab.graph, fab.spec
    agcus = fab.sites_of("agcu")
    assert Counter(a.array for a in agcus) == Counter(
        {i: 4 for i in range(spec.array_count)} if spec.agcus_per_array else {})
    for a in agcus:
        q = fab.quadrant(a.id)
        assert a.id == f"A{a.array}_{q}"
        switches = set(g.successors(a.id))
        assert switches == set(g.predecessors(a.id)) and len(switches) == 2
        r_lo, r_hi, c_lo, c_hi = quadrant_bounds(spec, a.array, q)
        edge_row = r_lo if q < 2 else r_hi                 # the array's north or south edge
        for sw in switches:
            r, c = map(int, sw[1:].split("_"))
            assert r == edge_row and c_lo <= c <= c_hi
            assert g.edges[a.id, sw]["kind"] == "agcu" == g.edges[sw, a.id]["kind"]
        quadrant_units = [s for s in fab.sites_of("any")
                          if s.array == a.array and fab.quadrant(s.id) == q]
        assert quadrant_units and all(fab.agcu_of(s.id) == a.id for s in quadrant_units)


def test_link_ids_ends_and_capacities(fab):
    g, spec = fab.graph, fab.spec
    assert len(fab.links) == g.number_of_edges() == len(set(fab.links))
    for link in fab.links:
        a, b = fab.link_ends(link)
        assert link == f"{a}->{b}" and g.edges[a, b]["id"] == link
        assert g.has_edge(b, a), "every link has a partner in the other direction"
        for net in ("vector", "scalar", "control"):
            assert fab.capacity(link, net) == spec.networks[net].channels
        assert fab.capacity(link) == spec.networks["vector"].channels
    with pytest.raises(KeyError):
        fab.capacity(fab.links[0], "optical")
    with pytest.raises(KeyError):
        fab.link_ends("U0_0->U0_1")


def test_link_counts_by_kind(fab):
    spec = fab.spec
    kinds = Counter(k for _, _, k in fab.graph.edges(data="kind"))
    assert kinds["unit"] == 8 * spec.site_count
    assert kinds["agcu"] == 4 * spec.agcu_count
    mesh = spec.rows * (spec.cols + 1) + (spec.rows + 1) * spec.cols
    assert kinds["switch"] == 2 * mesh


def test_only_switches_relay(fab):
    assert fab.relay_nodes == frozenset(fab.switches)
    a, b = fab.sites_of("any")[0].id, fab.sites_of("any")[-1].id
    path = nx.shortest_path(fab.routable_view(a, b), a, b)
    assert all(fab.is_switch(n) for n in path[1:-1])


# --- distance -----------------------------------------------------------------------
def test_distance_matches_networkx_for_all_pairs_on_tiny():
    fab = build_fabric(load_hardware("tiny"))
    ids = [s.id for s in fab.sites]
    matrix = fab.distance_matrix()
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            assert fab.distance(a, b) == reference_distance(fab, a, b) == matrix[i, j]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_distance_matches_networkx_on_random_pairs(data):
    spec = data.draw(st.sampled_from(SPECS[1:]))
    fab = build_fabric(spec)
    a = data.draw(st.sampled_from(fab.sites)).id
    b = data.draw(st.sampled_from(fab.sites)).id
    assert fab.distance(a, b) == fab.distance(b, a) == reference_distance(fab, a, b)


def test_distance_on_sn10_sampled():
    fab = build_fabric(load_hardware("sn10"))
    rng = np.random.default_rng(7)
    ids = [s.id for s in fab.sites]
    for _ in range(12):
        a, b = (ids[i] for i in rng.integers(0, len(ids), size=2))
        assert fab.distance(a, b) == reference_distance(fab, a, b)
    # across the four tiles, corner to corner
    assert fab.distance("U0_0", "U39_31") == 38 + 30


def test_distance_matrix_subset_and_symmetry(fab):
    ids = [s.id for s in fab.sites][::3]
    m = fab.distance_matrix(ids)
    assert m.shape == (len(ids), len(ids)) and (m == m.T).all() and (np.diag(m) == 0).all()
    assert m[0, -1] == fab.distance(ids[0], ids[-1])


# --- building ----------------------------------------------------------------------
def test_sn10_builds_and_is_cached():
    spec = load_hardware("sn10")
    fab = RduFabric(spec)
    assert len(fab.sites_of("any")) == 1280 and len(fab.switches) == 41 * 33
    assert build_fabric(spec) is build_fabric(load_hardware("sn10"))


def test_deterministic_order():
    spec = load_hardware("plasticine")
    one, two = RduFabric(spec), RduFabric(spec)
    assert one.links == two.links and one.sites == two.sites
    assert list(one.graph.nodes) == list(two.graph.nodes)


def test_describe_mentions_the_counts():
    text = build_fabric(load_hardware("plasticine")).describe()
    for part in ("64 PCU", "64 PMU", "4 AGCU", "153 switches", "vector 2 x 512 bit", "256 KiB"):
        assert part in text
    assert "\n" not in text


def test_build_fabric_rejects_other_kinds():
    with pytest.raises(TypeError):
        build_fabric(load_hardware("se16"))
