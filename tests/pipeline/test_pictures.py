"""Pictures: every section drawn (no silent cap), captions with mapping.json's wirelength."""

import time

import matplotlib
import pytest

from model.mapping import Mapping
from pipeline.pictures import draw_mapping, draw_nets, draw_section, link_loads, picture_names


def many_sections(fabric, count: int, wirelength: int | None = None) -> Mapping:
    """``count`` sections of two placed nodes joined by one routed edge over two links."""
    a, b = fabric.sites[0], fabric.sites[1]
    links = list(fabric.links)[:2]
    placement, routes, stages, sections = {}, [], [], []
    for k in range(count):
        src, dst = f"s{k}", f"d{k}"
        sections.append({"id": k, "nodes": [src, dst]})
        placement[src] = {"section": k, "site": a.id, "x": a.x, "y": a.y, "unit": a.unit}
        placement[dst] = {"section": k, "site": b.id, "x": b.x, "y": b.y, "unit": b.unit}
        routes.append({"edge": k, "src": src, "dst": dst, "net": f"n{k}", "section": k,
                       "links": links})
        stages.append({"stage": "routing", "section": k, "objective": wirelength or 2})
    return Mapping(graph="g", hardware=fabric.spec.name, status="mapped", sections=sections,
                   placement=placement, routes=routes, stages=stages)


def test_every_section_is_drawn(tiny, tmp_path):
    """The old code stopped at 24 sections without a word."""
    mapping = many_sections(tiny, 25)
    names = draw_mapping(mapping, tiny, tmp_path, "png")
    assert len(names) == 75 and names[-3:] == picture_names(24, "png")
    assert all((tmp_path / n).exists() for n in names)


def test_a_deadline_leaves_out_secondary_pictures_before_any_sections_main_one(tiny, tmp_path,
                                                                              monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    names = draw_mapping(many_sections(tiny, 3), tiny, tmp_path, "png", deadline=4)
    assert names == ["section0.png", "section0_nets.png", "section1.png", "section2.png"]


def test_long_names_fit_and_keep_their_full_text_as_tooltips(tiny, tmp_path, text_svg):
    mapping = many_sections(tiny, 1)
    long_name = "bert.encoder.layer.0.attention.self.value.weight#pmu2"
    mapping.placement[long_name] = mapping.placement.pop("s0")
    mapping.graph = "g" * 200
    draw_section(mapping, tiny, 0, tmp_path / "s.svg")
    svg = (tmp_path / "s.svg").read_text()
    assert f"<title>{long_name} (" in svg and ">…t#pmu2<" in svg.replace("\n", "")
    assert f"<title>{'g' * 200}" in svg and "g" * 81 not in svg.split("<title>")[0]
    assert "PCU (compute) used" in svg and "link: 1 net(s)" in svg        # the legend


def test_max_sections_is_an_explicit_limit(tiny, tmp_path):
    names = draw_mapping(many_sections(tiny, 4), tiny, tmp_path, "png", max_sections=2)
    assert names == picture_names(0, "png") + picture_names(1, "png")


def test_no_section_is_begun_after_the_deadline(tiny, tmp_path):
    """The run's time limit covers its pictures: none is started once it has passed."""
    past = time.monotonic() - 1.0
    assert draw_mapping(many_sections(tiny, 3), tiny, tmp_path, "png", deadline=past) == []
    assert list(tmp_path.iterdir()) == []
    later = time.monotonic() + 3600.0
    assert len(draw_mapping(many_sections(tiny, 2), tiny, tmp_path, "png", deadline=later)) == \
        2 * len(picture_names(0, "png"))


@pytest.fixture
def text_svg():
    """Keep SVG text as text so captions can be read back."""
    matplotlib.rcParams["svg.fonttype"] = "none"
    yield
    matplotlib.rcParams["svg.fonttype"] = "path"


def test_captions_give_the_checkers_wirelength(tiny, tmp_path, text_svg):
    mapping = many_sections(tiny, 1)
    assert sum(link_loads(mapping, 0).values()) == 2
    draw_section(mapping, tiny, 0, tmp_path / "s.svg")
    draw_nets(mapping, tiny, 0, tmp_path / "n.svg")
    assert "wirelength 2 links" in (tmp_path / "s.svg").read_text()
    assert "1 edges drawn straight; routed wirelength 2 links" in (tmp_path / "n.svg").read_text()


def test_captions_say_when_fewer_links_are_drawn(tiny, tmp_path, text_svg):
    """Links to added bank units count in the wirelength but are not in mapping.json's routes."""
    mapping = many_sections(tiny, 1, wirelength=5)
    draw_section(mapping, tiny, 0, tmp_path / "s.svg")
    assert "wirelength 5 links (2 drawn" in (tmp_path / "s.svg").read_text()
