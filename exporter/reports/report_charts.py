"""Inline SVG charts for reports: the memory plan (tensors' lifetimes against their offsets)."""

from exporter.reports.report_html import esc, size

_PALETTE = ("#60a5fa", "#34d399", "#fbbf24", "#f472b6", "#a78bfa", "#fb923c", "#2dd4bf", "#f87171")
WIDTH, HEIGHT, LEFT, BOTTOM = 1000, 240, 70, 26


def _ticks(top, count=4):
    return [top * i // count for i in range(count + 1)]


def memory_chart(tensors, buffer_id, used):
    """One planned buffer: x is the planning pass's step, y the byte offset; each tensor a box
    from its first to its last step over its bytes, titled with its name, size and place."""
    mine = [t for t in tensors if t["buffer"] == buffer_id]
    steps = max([t["lifetime"][1] + 1 for t in mine] + [1])
    top = max(used, 1)
    plot_w, plot_h = WIDTH - LEFT - 10, HEIGHT - BOTTOM - 10
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'aria-label="memory plan of buffer {buffer_id}">']
    for tick in _ticks(top):
        y = 10 + plot_h - plot_h * tick / top
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e8f0"/>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#64748b">'
                     f'{esc(size(tick))}</text>')
    for i, t in enumerate(mine):
        x = LEFT + plot_w * t["lifetime"][0] / steps
        w = max(plot_w * (t["lifetime"][1] + 1 - t["lifetime"][0]) / steps, 1.0)
        h = max(plot_h * t["bytes"] / top, 1.0)
        y = 10 + plot_h - plot_h * (t["offset"] + t["bytes"]) / top
        title = (f'{t["name"]}: {size(t["bytes"])} at offset {t["offset"]:,}, '
                 f'steps {t["lifetime"][0]} to {t["lifetime"][1]}')
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="1.5" '
                     f'fill="{_PALETTE[i % len(_PALETTE)]}" fill-opacity="0.8" stroke="#1e293b" '
                     f'stroke-width="0.4"><title>{esc(title)}</title></rect>')
    parts.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" font-size="11" text-anchor="middle" '
                 f'fill="#64748b">step of the memory plan (0 to {steps - 1}) →</text></svg>')
    return "".join(parts)
