"""The report as one self-contained HTML page: the headline figures, five charts (cost over time, cost by
cause, cache misses by reason, what each agent forgot, the sessions that cost most) and two tables.

The charts are plotly's (`pip install 'tui-agent[report]'`), with plotly.js inlined once in the page, so it
opens from a file, mailed or offline, with no network. Every text that comes from a log (paths, model ids,
error lines) is escaped; each chart has a fixed id, so the same report makes the same page.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from tui_agent.report.table import STRATEGIES
from tui_agent.report.terminal import MISS_WORDS, usd
from tui_agent.report.totals import CAUSES, LABELS, RECORDED, Totals

AGENTS = (RECORDED, *STRATEGIES)
COLOURS = {RECORDED: "#555b6e", "append_only": "#a0a4b8", "ours": "#2a9d8f", "claude_code": "#e76f51",
           "opencode": "#f4a261", "context_editing": "#8d6cab"}
CAUSE_COLOURS = {"conversation": "#4c78a8", "pings": "#72b7b2", "idle rewrites": "#e45756", "summaries": "#eeca3b"}
MISS_COLOURS = {"ttl_expired": "#e45756", "compaction": "#f58518", "model_changed": "#b279a2", "unknown": "#9d9da1"}
CONFIG = {"displaylogo": False, "responsive": True}
STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2.2rem; }
.lead { color: #555; margin-top: 0; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1.2rem 0; }
.card { border: 1px solid #ddd; border-radius: 8px; padding: .8rem 1rem; min-width: 180px; flex: 1; }
.card b { display: block; font-size: 1.5rem; } .card span { color: #666; font-size: .85rem; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { border-bottom: 1px solid #eee; padding: .35rem .5rem; text-align: left; vertical-align: top; }
td.n { text-align: right; white-space: nowrap; } code { font-size: .8rem; word-break: break-all; }
"""


def _plotly() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError:
        raise RuntimeError("--html needs plotly: pip install 'tui-agent[report]'") from None
    return go


def write_page(t: Totals, path: Path, title: str = "tui-agent report") -> None:
    """Write the page for `t` to `path` (RuntimeError, one line, when plotly is missing)."""
    go = _plotly()
    from plotly.offline import get_plotlyjs

    charts = [("Cost over time", _over_time(go, t)), ("Cost by cause", _by_cause(go, t)),
              ("Cache misses by reason", _misses(go, t)), ("What each agent forgot", _forgot(go, t)),
              ("The sessions that cost most", _costly_chart(go, t))]
    body = [f"<h1>{html.escape(title)}</h1>", _lead(t), _cards(t)]
    for n, (heading, figure) in enumerate(charts):
        body.append(f"<h2>{html.escape(heading)}</h2>")
        figure.update_layout(template="plotly_white", margin={"l": 60, "r": 20, "t": 30, "b": 50}, height=380,
                             legend={"orientation": "h", "y": -0.2})
        body.append(figure.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart-{n}", config=CONFIG))
    body += [_costly_table(t), _unreadable(t)]
    page = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>{''.join(body)}</body></html>")
    path.write_text(page, encoding="utf-8")


def _lead(t: Totals) -> str:
    bits = [f"{t.sessions:,} sessions, {t.calls:,} model calls, replayed call by call under tui-agent's compactor "
            "and idle policy and the peers' documented rules, priced at each model's list prices."]
    if t.unpriced:
        bits.append(f"{t.unpriced} sessions with no list price for their model are left out of the money.")
    if t.unreadable:
        bits.append(f"{len(t.unreadable)} sessions could not be read (listed at the end).")
    return f"<p class=\"lead\">{html.escape(' '.join(bits))}</p>"


def _cards(t: Totals) -> str:
    recorded, ours = t.agents[RECORDED], t.agents["ours"]
    change = (ours.usd - recorded.usd) / recorded.usd if recorded.usd else 0.0
    cards = [(usd(recorded.usd + t.output_usd), f"spent at list prices ({usd(t.output_usd)} of it output)"),
             (usd(ours.usd), f"tui-agent on the same calls' input ({change:+.0%})"),
             (usd(recorded.causes["idle rewrites"]), "the recorded agent's rewrites after idle"),
             (f"{1 - recorded.coverage:.1%} / {1 - ours.coverage:.1%}", "forgotten: recorded agent / tui-agent")]
    return "<div class=\"cards\">" + "".join(
        f"<div class=\"card\"><b>{html.escape(v)}</b><span>{html.escape(k)}</span></div>" for v, k in cards) + "</div>"


def _over_time(go: Any, t: Totals) -> Any:
    """Each agent's spend added up day by day (a step per day with sessions: sparse days read right)."""
    days = sorted(d for d in t.by_day if d != "unknown")
    figure = go.Figure()
    for name in AGENTS:
        running, ys = 0.0, []
        for day in days:
            running += t.by_day[day].get(name, 0.0)
            ys.append(running)
        figure.add_trace(go.Scatter(x=days, y=ys, name=LABELS[name], mode="lines+markers", line_shape="hv",
                                    line={"color": COLOURS[name]}))
    figure.update_layout(yaxis_title="USD so far (input side)", yaxis_rangemode="tozero", hovermode="x unified")
    return figure


def _by_cause(go: Any, t: Totals) -> Any:
    names = [LABELS[n] for n in AGENTS]
    figure = go.Figure()
    for cause in CAUSES:
        figure.add_trace(go.Bar(y=names, x=[t.agents[n].causes[cause] for n in AGENTS], name=cause, orientation="h",
                                marker_color=CAUSE_COLOURS[cause]))
    figure.update_layout(barmode="stack", xaxis_title="USD (input side)", yaxis={"autorange": "reversed"})
    return figure


def _misses(go: Any, t: Totals) -> Any:
    figure = go.Figure()
    for reason, words in MISS_WORDS.items():
        values = [t.agents[n].misses.get(reason, 0.0) / 1e6 for n in AGENTS]
        if any(values):
            figure.add_trace(go.Bar(x=[LABELS[n] for n in AGENTS], y=values, name=words,
                                    marker_color=MISS_COLOURS[reason]))
    figure.update_layout(barmode="stack", yaxis_title="M tokens written again")
    return figure


def _forgot(go: Any, t: Totals) -> Any:
    shares = [100 * (1 - t.agents[n].coverage) for n in AGENTS]
    figure = go.Figure(go.Bar(x=[LABELS[n] for n in AGENTS], y=shares, marker_color=[COLOURS[n] for n in AGENTS],
                              text=[f"{s:.1f}%" for s in shares], textposition="outside"))
    figure.update_layout(yaxis_title="% of what the next replies used, gone")
    if t.prompts_before or t.paths_before:
        figure.add_annotation(text=f"the recorded agent's summaries dropped {t.forgot_prompts}/{t.prompts_before} "
                              f"prompts and {t.forgot_paths}/{t.paths_before} file paths", showarrow=False,
                              xref="paper", yref="paper", x=1, y=1.08, xanchor="right")
    return figure


def _costly_chart(go: Any, t: Totals) -> Any:
    names = [Path(c.path).name[:48] for c in t.costly]
    figure = go.Figure()
    figure.add_trace(go.Bar(y=names, x=[c.recorded_usd for c in t.costly], name=LABELS[RECORDED], orientation="h",
                            marker_color=COLOURS[RECORDED]))
    figure.add_trace(go.Bar(y=names, x=[c.ours_usd for c in t.costly], name=LABELS["ours"], orientation="h",
                            marker_color=COLOURS["ours"]))
    figure.update_layout(barmode="group", xaxis_title="USD (input side)", yaxis={"autorange": "reversed"})
    return figure


def _costly_table(t: Totals) -> str:
    rows = "".join(f"<tr><td class=\"n\">{usd(c.recorded_usd)}</td><td class=\"n\">{usd(c.ours_usd)}</td>"
                   f"<td><code>{html.escape(c.path)}</code><br>{html.escape(c.why)}</td></tr>" for c in t.costly)
    return ("<table><tr><th>recorded</th><th>tui-agent</th><th>session and why</th></tr>" + rows + "</table>"
            if rows else "")


def _unreadable(t: Totals) -> str:
    if not t.unreadable:
        return ""
    items = "".join(f"<tr><td><code>{html.escape(r.path)}</code></td><td>{html.escape(r.error)}</td></tr>"
                    for r in t.unreadable)
    return f"<h2>Could not be read ({len(t.unreadable)})</h2><table>{items}</table>"
