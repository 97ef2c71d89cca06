"""Copy the README's figure out of the book: Figure 1 of the FedSAM Figure 11 page.

The README shows one figure exactly as the book shows it: the first figure of an executed
artifact page, decoded from the page's notebook and written as a PNG.  The page must have
been built at the scale the README names (``small``)::

    flcore reproduce fedsam-fig-11 --scale small      # or `make main`, which builds every page
    python book/_static/readme_figure.py              # -> book/_static/readme-figure.png

A page built at another scale, a failed page or a page without a figure is refused with
one line and exit status 2; nothing is written then.
"""
from __future__ import annotations

import argparse
import base64
import binascii
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARTIFACT = "fedsam-fig-11"
SCALE = "small"
OUTPUT = ROOT / "book" / "_static" / "readme-figure.png"
#: How an artifact page embeds a figure (``flcore.report.page.figure_html``).
FIGURE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class FigureError(Exception):
    """The page cannot give the figure (the message says why)."""


def page_figure(root: Path, artifact: str = ARTIFACT, scale: str = SCALE, index: int = 0) -> bytes:
    """The PNG bytes of figure ``index`` of ``artifact``'s executed page under ``root``."""
    paper = artifact.split("-", 1)[0]
    page = root / "book" / "artifacts" / paper / f"{artifact}.ipynb"
    manifest = root / "book" / "_artifacts.json"
    if not page.is_file() or not manifest.is_file():
        raise FigureError(f"{page} is not built; run: flcore reproduce {artifact} --scale {scale}")
    entry = json.loads(manifest.read_text()).get("artifacts", {}).get(artifact, {})
    if entry.get("status") != "ok" or entry.get("scale") != scale:
        raise FigureError(f"{artifact} was last built with status {entry.get('status')!r} at scale "
                          f"{entry.get('scale')!r}; the README's figure needs an ok build at {scale!r}: "
                          f"flcore reproduce {artifact} --scale {scale}")
    figures = []
    for cell in json.loads(page.read_text())["cells"]:
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            figures.extend(FIGURE.findall("".join(html) if isinstance(html, list) else html))
    if len(figures) <= index:
        raise FigureError(f"{page} has {len(figures)} figure(s); figure {index + 1} was asked for")
    try:
        png = base64.b64decode(figures[index], validate=True)
    except binascii.Error as exc:
        raise FigureError(f"{page}: figure {index + 1} is not valid base64 ({exc})") from None
    if not png.startswith(PNG_SIGNATURE):
        raise FigureError(f"{page}: figure {index + 1} is not a PNG")
    return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root holding book/")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"PNG to write (default: {OUTPUT})")
    args = parser.parse_args(argv)
    try:
        png = page_figure(args.root)
    except FigureError as exc:
        print(f"readme_figure: error: {exc}", file=sys.stderr)
        return 2
    args.output.write_bytes(png)
    print(f"wrote {args.output} ({len(png)} bytes) from Figure 1 of the {ARTIFACT} page at the {SCALE} scale")
    return 0


if __name__ == "__main__":
    sys.exit(main())
