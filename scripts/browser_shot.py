"""Picture of one question's retrieved subgraph in Neo4j Browser, for the README.

Asks ``--question`` on the configured (managed) Neo4j as `gr-neo4j ask` does, opens the Browser URL
that `ask` prints in headless Chromium (Debian's package, driven by Playwright), logs in, runs the
pre-filled query that shows the recorded Retrieval with its TOPIC and ANSWER links, and saves a
screenshot.

    python scripts/browser_shot.py --dataset metaqa \
        --question "which films did Tom Hanks act in that were directed by Robert Zemeckis" \
        --out docs/img/browser_ask.png
"""

from __future__ import annotations

import argparse
import shutil
import sys

from gr_neo4j.answer import ask, browser_url, show_query
from gr_neo4j.home.layout import layout_of
from gr_neo4j.settings import load_settings

HIDE_BANNER = """() => {
  for (const el of document.querySelectorAll('div')) {
    if (el.childElementCount < 4 && el.textContent.startsWith('To help make Neo4j Browser better')) { el.style.display = 'none'; }
  }
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", required=True)
    parser.add_argument("--dataset", default="metaqa")
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", default="1200x760", help="Viewport WIDTHxHEIGHT in pixels.")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    settings = load_settings()
    result = ask(settings, args.question, args.dataset, answer_it=True)
    print(f"answer: {result.answer}")
    url = browser_url(settings, show_query(result.retrieval_id))
    width, height = (int(x) for x in args.size.split("x"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(60_000)
            page.goto(url)
            page.fill("[data-testid=boltaddress]", f"bolt://127.0.0.1:{settings.bolt_port}")
            page.fill("[data-testid=username]", "neo4j")
            page.fill("[data-testid=password]", layout_of(settings).read_password())
            page.click("[data-testid=connect]")
            page.wait_for_selector("[data-testid=frameCommand] >> text=:style", state="attached")
            page.click("[data-testid=editor-Run]")
            page.wait_for_selector("svg g.relationship path.b-outline", state="attached")
            page.wait_for_timeout(3000)  # let the force layout settle
            # The usage-data banner is Browser's, not the answer's: hide it from the picture.
            page.evaluate(HIDE_BANNER)
            page.screenshot(path=args.out)
        finally:
            browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
