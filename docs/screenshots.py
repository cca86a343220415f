"""Screenshots of the served sample index for the README, in headless Chromium at
1400x1000: the home page, findings, packets, a packet's row page and its story.

    .venv/bin/python docs/screenshots.py      (writes docs/screenshots/*.png)

It also prints, for each page, the rows on the first screen and any sideways
scroll, the figures the browser tests hold.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
PACKET = "registry/packets/2026/20260903-maria-ops-retention-question.json"
PAGES = {
    "home": "/sample",
    "findings": "/sample/findings",
    "packets": "/sample/packets",
    "row": "/sample/records/" + PACKET.replace("/", "~2F").replace(".json", "~2Ejson"),
    "story": "/sample/-/story?node=" + PACKET,
}


def main() -> None:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from bench.servers import free_port, wait_until_up
    from labnote_index.api import build

    work = Path(tempfile.mkdtemp())
    db = work / "sample.db"
    build(ROOT / "sample_repo", db)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "labnote_index", "serve", str(db), "--port", str(port)], cwd=ROOT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                args=["--headless", "--no-sandbox", "--disable-gpu"],
            )
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            for name, path in PAGES.items():
                page.goto(base + path)
                page.screenshot(path=str(OUT / f"{name}.png"))
                rows = page.evaluate(
                    "[...document.querySelectorAll('table.rows-and-columns tbody tr')]"
                    ".filter(r => r.getBoundingClientRect().bottom <= window.innerHeight).length"
                )
                sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                print(f"{name}: {rows} rows on the first screen, {sideways} px sideways scroll")
            chromium.close()
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
