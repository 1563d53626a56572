"""Neo4j Browser is served by the managed server and really renders (headless Chromium)."""

from __future__ import annotations

import math
import shutil
import subprocess

import pytest

from gr_neo4j.server import process


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.fail("chromium is not installed (scripts/test.sh installs Debian's chromium package)")
    return exe


def test_browser_renders_the_connect_form(server, tmp_path):
    url = process.status(server).browser_url
    assert url == f"http://127.0.0.1:{server.http_port}/browser/"
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000"]
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120, check=False).stdout
    # The static HTML only has the <title>; these texts exist only once Browser's JavaScript has run.
    assert "<title>Neo4j Browser</title>" in dom
    assert "Connect to Neo4j" in dom
    assert "Connect URL" in dom
    shot = tmp_path / "browser.png"
    subprocess.run(args + ["--window-size=1280,800", f"--screenshot={shot}", url], capture_output=True, timeout=120, check=False)
    assert shot.stat().st_size > 10_000


KB = """Titanic|directed_by|James Cameron
Titanic|starred_actors|Leonardo DiCaprio
Titanic|release_year|1997
Avatar|directed_by|James Cameron
Inception|directed_by|Christopher Nolan
Inception|starred_actors|Leonardo DiCaprio
"""

# Each drawn node and relationship of the graph view: its caption, its fill colour and where it is.
# A relationship is drawn in a group translated to its start node's centre and rotated towards its end.
DRAWN = """() => {
  const at = g => (g.getAttribute('transform').match(/-?[0-9][0-9.]*(e-?[0-9]+)?/g) || []).map(Number);
  const item = (g, shape) => ({text: g.textContent.trim(), fill: g.querySelector(shape).getAttribute('fill'), at: at(g)});
  return {nodes: [...document.querySelectorAll('svg g.node')].map(g => item(g, 'circle.b-outline')),
          rels: [...document.querySelectorAll('svg g.relationship')].map(g => item(g, 'path.b-outline'))};
}"""


def ends(drawn: dict) -> list[tuple[str, str, str, str]]:
    """(start caption, relationship caption, its fill, end caption) of each drawn relationship: the
    end is the node in the direction the relationship group is rotated to."""
    out = []
    for rel in drawn["rels"]:
        x, y, angle = rel["at"]
        start = min(drawn["nodes"], key=lambda n: math.dist(n["at"], (x, y)))
        others = [n for n in drawn["nodes"] if n is not start]

        def off(n, x=x, y=y, angle=angle):
            bearing = math.degrees(math.atan2(n["at"][1] - y, n["at"][0] - x))
            return abs((bearing - angle + 180) % 360 - 180)

        end = min(others, key=off)
        out.append((start["text"], rel["text"], rel["fill"], end["text"]))
    return out


def test_browser_shows_a_recorded_ask_with_its_topic_and_answers_marked(server, conn, tmp_path):
    """Log in to the managed server's Browser, run the `show` query of a recorded ask from the URL
    `ask` prints, and find the question node, its TOPIC link to James Cameron and its ANSWER links to
    the two films drawn in gr-neo4j's colours (applied by browser.post_connect_cmd, nothing dragged)."""
    from playwright.sync_api import sync_playwright

    from gr_neo4j.answer import ask, browser_url, show_query
    from gr_neo4j.browser import style_rules
    from gr_neo4j.home.layout import layout_of
    from gr_neo4j.ingest.pipeline import load_dataset
    from gr_neo4j.retrieval import RetrievalParams

    root = tmp_path / "metaqa"
    (root / "1-hop").mkdir(parents=True)
    (root / "kb.txt").write_text(KB)
    (root / "1-hop" / "qa_dev.txt").write_text("who directed [Titanic]\tJames Cameron\n")
    load_dataset(server, "metaqa", path=root)
    question = "which films did James Cameron direct"
    out = ask(server, question, "metaqa", params=RetrievalParams(hops=1))
    assert set(out.answer.split("|")) == {"Titanic", "Avatar"} and out.retrieval_id
    url = browser_url(server, show_query(out.retrieval_id))
    style = style_rules()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            page.goto(url)
            page.fill("[data-testid=boltaddress]", f"bolt://127.0.0.1:{server.bolt_port}")
            page.fill("[data-testid=username]", "neo4j")
            page.fill("[data-testid=password]", layout_of(server).read_password())
            page.click("[data-testid=connect]")
            # the URL pre-filled the editor with the show query; the connection ran the :style command
            page.wait_for_selector("[data-testid=frameCommand] >> text=:style", state="attached")
            assert "MATCH (r:Retrieval" in page.inner_text("[data-testid=activeEditor]").replace("\xa0", " ")
            page.click("[data-testid=editor-Run]")
            page.wait_for_selector("svg g.relationship path.b-outline", state="attached")
            page.wait_for_timeout(1000)  # let the force layout move the nodes apart
            drawn = page.evaluate(DRAWN)
            page.screenshot(path=str(tmp_path / "show.png"))
        finally:
            browser.close()
    fills = {n["text"]: n["fill"] for n in drawn["nodes"]}
    assert fills == {question: style["node.Retrieval"]["color"], **dict.fromkeys(["James Cameron", "Titanic", "Avatar"], style["node.Entity"]["color"])}, drawn
    marks = {(s, r, f, e) for s, r, f, e in ends(drawn) if r in ("TOPIC", "ANSWER")}
    answer, topic = style["relationship.ANSWER"]["color"], style["relationship.TOPIC"]["color"]
    assert marks == {(question, "TOPIC", topic, "James Cameron"), (question, "ANSWER", answer, "Titanic"), (question, "ANSWER", answer, "Avatar")}, drawn
    assert ("Titanic", "directed by", style["relationship.REL"]["color"], "James Cameron") in ends(drawn)
