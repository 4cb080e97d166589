"""Program reports, the zoo's dashboard and a snapshot diff in Debian's headless Chromium.

Each page must render every section, log no console error, fetch nothing, and answer a real
mouse click on a graph node with that node's details. Full-page screenshots go to the test's
undeclared outputs (bazel-testlogs/tests/report/browser_test/test.outputs/outputs.zip).
"""

import dataclasses
import json
import os

import pytest

import chromium
from exporter.checks import contract, golden

REPORTS = {
    "//models:resnet_pte": "models/resnet_pte.report.html",
    "//models/gru:gru_pte": "models/gru/gru_pte.report.html",
    "//models/llm:tiny_lm_llm": "models/llm/tiny_lm_llm.report.html",
    "//models/mobilenet:mobilenet_external_v1": "models/mobilenet/mobilenet_external_v1.report.html",
    "//models/transformer:transformer_two_methods_pte": "models/transformer/transformer_two_methods_pte.report.html",
}
DASHBOARD = "models/report.html"
SECTIONS = ["graph", "delegation", "size", "memory", "profile", "numerics", "budget", "facts"]

# The sections: id, height on the page, length of their text.
_SECTIONS_JS = """Array.from(document.querySelectorAll('main > section')).map(function(s){
 return [s.id, s.getBoundingClientRect().height, s.innerText.length]})"""

# A node of the visible method with an operator whose centre is inside its viewport and on top:
# [svg id, operator, x, y] in the page's viewport, or null.
_NODE_JS = """(function(){const vp=document.querySelector('.method.on .viewport');vp.scrollIntoView({block:'center'});
 const box=vp.getBoundingClientRect();const nodes=JSON.parse(document.getElementById('report-data').textContent)
 .nodes[vp.dataset.method];for(const g of vp.querySelectorAll('g.node')){const d=nodes[g.id];if(!d||!d.op)continue;
 const r=g.getBoundingClientRect(),x=r.x+r.width/2,y=r.y+r.height/2;
 if(x>box.left+4&&x<box.right-4&&y>box.top+4&&y<box.bottom-4){const hit=document.elementFromPoint(x,y);
  if(hit&&hit.closest('g.node')===g)return [g.id,d.op,x,y]}}return null})()"""


def _out(name):
    return os.path.join(os.environ["TEST_UNDECLARED_OUTPUTS_DIR"], name)


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(chromium.BINARY):
        pytest.fail(f"{chromium.BINARY} is missing: install Debian's chromium (apt-get install chromium; "
                    f"./bazelw does it as root)")
    with chromium.Browser() as found:
        yield found


def _open(browser, path):
    browser.open("file://" + os.path.abspath(path))
    assert browser.evaluate("performance.getEntriesByType('resource').length") == 0  # nothing fetched


def _click_a_node(browser):
    """Clicks a node of the visible method; returns (its operator, what the details panel shows)."""
    found = browser.evaluate(_NODE_JS)
    assert found, "no operator node is visible in the graph"
    svg_id, op, x, y = found
    browser.click(x, y)
    method = browser.evaluate("document.querySelector('.method.on .viewport').dataset.method")
    shown = browser.evaluate(f"document.querySelector('#details-{method} h4').textContent")
    assert browser.evaluate(f"document.getElementById({json.dumps(svg_id)}).classList.contains('sel')")
    return op, shown


@pytest.mark.parametrize("label", sorted(REPORTS))
def test_a_report_renders_every_section_and_answers_a_click(browser, label):
    _open(browser, REPORTS[label])
    assert browser.evaluate("document.querySelector('header h1').textContent") == label
    sections = browser.evaluate(_SECTIONS_JS)
    assert [s[0] for s in sections] == SECTIONS
    assert all(height > 60 and text > 40 for _, height, text in sections), sections
    counts = browser.evaluate("""(function(){const data=JSON.parse(document.getElementById('report-data')
      .textContent).nodes;return Array.from(document.querySelectorAll('.viewport')).map(function(vp){
      return [vp.querySelectorAll('g.node').length, Object.keys(data[vp.dataset.method]).length]})})()""")
    assert counts and all(drawn == listed > 0 for drawn, listed in counts), counts
    op, shown = _click_a_node(browser)
    assert shown == op
    browser.screenshot(_out(label.rpartition(":")[2] + ".png"))
    assert browser.problems() == []


def test_the_search_marks_matching_nodes(browser):
    _open(browser, REPORTS["//models:resnet_pte"])
    found = browser.evaluate("""(function(){const i=document.querySelector('.method.on .tools input');
      i.value='convolution';i.dispatchEvent(new Event('input'));
      return [document.querySelectorAll('.method.on g.node.hit').length,
              document.querySelector('.method.on .tools .count').textContent]})()""")
    assert found[0] == 20 and found[1] == "20 found"  # ResNet-18's convolutions, delegated or not
    assert browser.problems() == []


def test_a_second_method_opens_in_its_tab(browser):
    _open(browser, REPORTS["//models/transformer:transformer_two_methods_pte"])
    x, y, name = browser.evaluate("""(function(){const b=document.querySelectorAll('.tabs button')[1];
      b.scrollIntoView({block:'center'});const r=b.getBoundingClientRect();
      return [r.x+r.width/2,r.y+r.height/2,b.dataset.method]})()""")
    browser.click(x, y)
    assert browser.evaluate("document.querySelector('.method.on').dataset.method") == name
    op, shown = _click_a_node(browser)
    assert shown == op
    browser.screenshot(_out("transformer_two_methods_pte.second_method.png"), full_page=False)
    assert browser.problems() == []


def test_the_dashboard_lists_the_zoo_and_links_each_report(browser):
    _open(browser, DASHBOARD)
    assert [s[0] for s in browser.evaluate(_SECTIONS_JS)] == ["programs", "budgets"]
    links = dict(browser.evaluate("""Array.from(document.querySelectorAll('#programs a')).map(function(a){
      return [a.textContent, a.getAttribute('href')]})"""))
    assert len(links) >= 25  # every program of the zoo
    for label, path in REPORTS.items():
        assert os.path.normpath(os.path.join(os.path.dirname(DASHBOARD), links[label])) == path
    missing = [href for href in links.values() if not os.path.exists(os.path.join(os.path.dirname(DASHBOARD), href))]
    assert missing == []
    browser.screenshot(_out("dashboard.png"))
    assert browser.problems() == []
    x, y = browser.evaluate("""(function(){const a=Array.from(document.querySelectorAll('#programs a')).find(
      function(a){return a.textContent==='//models/gru:gru_pte'});a.scrollIntoView({block:'center'});
      const r=a.getBoundingClientRect();return [r.x+r.width/2,r.y+r.height/2]})()""")
    browser.events = []
    browser.click(x, y)
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.querySelector('header h1').textContent") == "//models/gru:gru_pte"


def test_a_snapshot_diff_marks_the_changed_nodes(browser, tmp_path):
    config = contract.load("models/gru/gru_graph_test.config.json", contract.SnapshotConfig)
    stale = tmp_path / "gru.graph.txt"
    stale.write_text(golden.render(config).replace("aten.linear.default", "aten.matmul.default", 1))
    config = dataclasses.replace(config, golden=str(stale))
    assert not golden.run(config)[0]
    _open(browser, os.path.join(os.environ["TEST_UNDECLARED_OUTPUTS_DIR"], "gru.graph.txt.diff.html"))
    marked = browser.evaluate("document.querySelectorAll('g.node.mark').length")
    assert marked >= 2  # the changed node, on each side
    assert browser.evaluate("document.querySelectorAll('.viewport svg').length") == 2
    browser.screenshot(_out("snapshot_diff.png"), full_page=False)
    assert browser.problems() == []
