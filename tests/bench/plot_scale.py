#!/usr/bin/env python3
"""The table tests/bench/run_scale or tree_model prints (stdin) as an SVG plot (stdout): the
barrier's median against the number of brokers (or nodes), one line per radix, axes logarithmic,
with a dashed curve growing as log2(N) from the smallest figure for comparison (what a fence costs
when each broker has its own core: one step per level of the tree). Arguments replace the title
and the x axis's name."""
import math
import sys

rows = {}  # radix -> [(brokers, barrier us)]
for line in sys.stdin:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 4 or not cells[0].isdigit():
        continue
    try:
        rows.setdefault(int(cells[1]), []).append((int(cells[0]), float(cells[3])))
    except ValueError:  # "failed"
        continue
if not rows:
    sys.exit("plot_scale: no rows in the input (the output of tests/bench/run_scale)")

W, H, L, R, T, B = 640, 400, 70, 20, 30, 50
title = sys.argv[1] if len(sys.argv) > 1 else "fence (barrier) across N brokers, one rank each, median"
x_name = sys.argv[2] if len(sys.argv) > 2 else "brokers"
ns = sorted({n for pts in rows.values() for n, _ in pts})
ys = [y for pts in rows.values() for _, y in pts]
x0, x1 = math.log2(ns[0]), math.log2(ns[-1]) if ns[-1] > ns[0] else math.log2(ns[0]) + 1
y0, y1 = math.log10(min(ys)) - 0.2, math.log10(max(ys)) + 0.2


def px(n):
    return L + (math.log2(n) - x0) / (x1 - x0) * (W - L - R)


def py(us):
    return H - B - (math.log10(us) - y0) / (y1 - y0) * (H - T - B)


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
       'font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W / 2}" y="18" text-anchor="middle">{title}</text>',
       f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
       f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
       f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">{x_name} (log scale)</text>',
       f'<text x="16" y="{(T + H - B) / 2}" transform="rotate(-90 16 {(T + H - B) / 2})" '
       'text-anchor="middle">µs (log scale)</text>']
for n in ns:
    out.append(f'<text x="{px(n):.1f}" y="{H - B + 16}" text-anchor="middle">{n}</text>')
for e in range(math.floor(y0), math.ceil(y1) + 1):
    for m in (1, 2, 5):
        v = m * 10 ** e
        if y0 <= math.log10(v) <= y1:
            out.append(f'<text x="{L - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
            out.append(f'<line x1="{L}" y1="{py(v):.1f}" x2="{W - R}" y2="{py(v):.1f}" '
                       'stroke="#ddd"/>')
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
for i, (radix, pts) in enumerate(sorted(rows.items())):
    pts.sort()
    c = colors[i % len(colors)]
    path = " ".join(f"{px(n):.1f},{py(y):.1f}" for n, y in pts)
    out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
    for n, y in pts:
        out.append(f'<circle cx="{px(n):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
    out.append(f'<text x="{L + 10}" y="{T + 16 * (i + 1)}" fill="{c}">radix {radix}</text>')
base_n, base_y = ns[0], min(y for pts in rows.values() for n, y in pts if n == ns[0])
ref = " ".join(f"{px(n):.1f},{py(base_y * math.log2(n) / math.log2(base_n)):.1f}" for n in ns
               if y0 <= math.log10(base_y * math.log2(n) / math.log2(base_n)) <= y1)
out.append(f'<polyline points="{ref}" fill="none" stroke="gray" stroke-dasharray="5,4"/>')
out.append(f'<text x="{L + 10}" y="{T + 16 * (len(rows) + 1)}" fill="gray">log2 N from the '
           f'{base_n}-broker figure</text>')
out.append("</svg>")
print("\n".join(out))
