"""A claim's settling figure: each comparison's paired gap with its 95 % interval against
the evaluated rounds (:mod:`flcore.reproduction.settling`), drawn as a small inline SVG (no
image file, nothing to fetch), one panel per comparison that has a trajectory: the interval
as a band, the gap as a line, 0 dashed and the round the verdict settles at dotted."""
from __future__ import annotations

import html
from collections.abc import Sequence

WIDTH, HEIGHT, PAD = 220, 120, 26


def _panel(comparison: dict, number: int, left: int) -> list[str]:
    points = comparison["trajectory"]
    rounds = max(comparison.get("rounds") or points[-1]["round"], 1)
    low = min(min(p["low"] for p in points), 0.0)
    high = max(max(p["high"] for p in points), 0.0)
    span = (high - low) or 1.0

    def x(rnd: float) -> float:
        return left + PAD + (WIDTH - PAD - 6) * rnd / rounds

    def y(value: float) -> float:
        return 6 + (HEIGHT - PAD - 6) * (high - value) / span

    band = [f"{x(p['round']):.1f},{y(p['high']):.1f}" for p in points]
    band += [f"{x(p['round']):.1f},{y(p['low']):.1f}" for p in reversed(points)]
    line = " ".join(f"{x(p['round']):.1f},{y(p['gap']):.1f}" for p in points)
    out = [f'<polygon points="{" ".join(band)}" fill="#9ecae1" fill-opacity="0.6"/>',
           f'<polyline points="{line}" fill="none" stroke="#08519c" stroke-width="1.5"/>',
           f'<line x1="{x(0):.1f}" x2="{x(rounds):.1f}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#444" '
           'stroke-dasharray="3,3"/>',
           f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="6" y2="{HEIGHT - PAD}" stroke="#444"/>',
           f'<text x="{left + 2}" y="{y(high) + 4:.1f}" font-size="9">{high:+.1f}</text>',
           f'<text x="{left + 2}" y="{y(low):.1f}" font-size="9">{low:+.1f}</text>',
           f'<text x="{x(rounds / 2):.1f}" y="{HEIGHT - 4}" font-size="9" text-anchor="middle">'
           f'{number}. round (of {rounds})</text>']
    if comparison.get("settles_at") is not None:
        at = x(comparison["settles_at"])
        out.append(f'<line x1="{at:.1f}" x2="{at:.1f}" y1="6" y2="{HEIGHT - PAD}" stroke="#d62728" '
                   'stroke-dasharray="1,2"/>')
    return out


def settling_svg(comparisons: Sequence[dict], title: str) -> str:
    """The figure of a claim's ``comparisons`` (rows of ``flcore claims --json``, numbered in
    their order) that have a ``trajectory``; ``""`` when none has.  One line, no blank line:
    it sits in a Markdown page as a raw HTML block."""
    panels = [(number, c) for number, c in enumerate(comparisons, 1) if c.get("trajectory")]
    if not panels:
        return ""
    width = WIDTH * len(panels)
    body = [part for i, (number, c) in enumerate(panels) for part in _panel(c, number, i * WIDTH)]
    label = html.escape(title, quote=True)
    # a <div> opens a Markdown HTML block (it runs to the next blank line): the SVG passes as is
    return (f'<div class="claim-settling"><svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" role="img" aria-label="{label}"><title>{label}</title>'
            + "".join(body) + "</svg></div>")
