"""report.html: self-contained (no network), every id escaped, and in a real browser: no
JavaScript error, every section drawn, hover and click work.

The browser tests drive Debian's system ``chromium`` headless through selenium with the system
``chromedriver`` (nothing downloads a browser); they skip with the reason where either is
missing (``.ci/run`` installs them where apt is available).
"""

from __future__ import annotations

import re
import shutil

import pytest

from hardware import build_fabric, load_hardware
from model.graph import Edge, Graph, Node
from model.mapping import Mapping
from pipeline.html_report import json_for_script, render_html, write_html
from pipeline.options import RunOptions

#: Ids a user's file may hold: markup, the table separator, quotes, a script's end.
HOSTILE = ['<b>x</b>', 'a|b', 'q"uo\'te', '</script><script>alert(1)</script>']

PERF = {"compute_s": 0.2, "transfer_s": 0.05, "dram_s": 0.03, "reconfig_s": 0.01,
        "total_s": 0.29}


def rdu_mapping(fabric, sections: int = 3) -> Mapping:
    """``sections`` sections of two placed nodes with hostile ids joined by one route."""
    a, b = fabric.sites[0], fabric.sites[1]
    links = [f"{a.id}->{fabric.link_ends(l)[1]}" for l in fabric.links
             if fabric.link_ends(l)[0] == a.id][:1]
    placement, routes, parts = {}, [], []
    for k in range(sections):
        src, dst = f"{HOSTILE[k % 4]}{k}", f"{HOSTILE[(k + 1) % 4]}d{k}"
        parts.append({"id": k, "nodes": [src, dst], "perf": dict(PERF)})
        placement[src] = {"section": k, "site": a.id, "x": a.x, "y": a.y, "unit": a.unit}
        placement[dst] = {"section": k, "site": b.id, "x": b.x, "y": b.y, "unit": b.unit}
        routes.append({"edge": k, "src": src, "dst": dst, "net": f"n{k}", "section": k,
                       "links": links})
    return Mapping(graph='g<"|>', hardware=fabric.spec.name, status="mapped", sections=parts,
                   placement=placement, routes=routes,
                   metrics={"sections": sections, "throughput": 880.0, "latency_s": 0.01,
                            "bottleneck": "section 0: compute <x>", "perf_batch": 256})


def cgra_mapping():
    from pipeline.cgra import map_cgra
    graph = Graph("acc", [Node("a<|>", op="LOAD"), Node('b"', op="ADD")],
                  [Edge("a<|>", 'b"'), Edge('b"', 'b"', distance=1)])
    return map_cgra(graph, load_hardware("cgra4x4"), RunOptions(time_limit=5)), graph


def test_the_page_is_self_contained_and_escapes_every_id():
    tiny = load_hardware("tiny")
    page = render_html(rdu_mapping(build_fabric(tiny)), tiny, build_fabric(tiny))
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)       # no network
    assert "<script>alert(1)" not in page and "<b>x</b>" not in page
    assert page.count("</script>") == 2                  # the data's and the code's, no more
    assert json_for_script({"a": "</script>"}) == '{"a": "\\u003c/script\\u003e"}'


def test_a_failed_mapping_still_gets_a_page(tmp_path):
    failed = Mapping("g", "tiny", "failed", diagnosis="too big <x>")
    write_html(failed, load_hardware("tiny"), tmp_path / "report.html")
    assert "too big \\u003cx\\u003e" in (tmp_path / "report.html").read_text()


def _browser():
    """A headless system chromium through selenium, or skip with the reason."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed "
                                    '(pip install -e ".[test]")')
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no system browser: apt-get install -y chromium chromium-driver")
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = _browser()
    yield driver
    driver.quit()


def _load(browser, path) -> list:
    """Open ``path``; the page's severe console messages (JavaScript errors)."""
    browser.get(path.resolve().as_uri())
    assert browser.find_element("tag name", "body").get_attribute("data-ready") == "yes"
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_rdu_page_draws_every_section_and_answers_hover_and_click(browser, tmp_path):
    tiny = load_hardware("tiny")
    fabric = build_fabric(tiny)
    write_html(rdu_mapping(fabric, 3), tiny, tmp_path / "report.html", fabric)
    assert _load(browser, tmp_path / "report.html") == []
    assert len(browser.find_elements("css selector", ".rdu-section svg.grid")) == 3
    assert len(browser.find_elements("css selector", "svg.timeline rect.part")) == 3 * 4
    from selenium.webdriver.common.action_chains import ActionChains
    unit = browser.find_elements("css selector", ".rdu-section rect.site.used")[0]
    ActionChains(browser).move_to_element(unit).perform()
    assert HOSTILE[0] in browser.find_element("id", "info").text       # shown as written
    unit.click()
    assert browser.find_elements("css selector", ".rdu-section .hot")
    assert browser.title == 'rdamap: g<"|> on tiny'
    assert browser.save_screenshot(str(tmp_path / "rdu.png"))


def test_cgra_page_shows_pes_by_slots(browser, tmp_path):
    mapping, graph = cgra_mapping()
    write_html(mapping, load_hardware("cgra4x4"), tmp_path / "report.html", graph=graph)
    assert _load(browser, tmp_path / "report.html") == []
    cells = [c.text for c in browser.find_elements("css selector", "table.schedule td.busy")]
    assert "a<|>" in cells and 'b"' in cells
    rows = browser.find_elements("css selector", "table.schedule tr")
    assert len(rows) == 1 + mapping.ii                   # the header, one row per slot
    assert browser.save_screenshot(str(tmp_path / "cgra.png"))
