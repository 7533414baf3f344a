"""The report in the terminal: a few lines of what was spent, what ours would have spent and why, what each
agent forgot, the costliest sessions, and one line per session that could not be read. Plain text (a
pipe or a log file reads it as well as a terminal); the file names and model ids come from the logs, so
the caller strips control characters before printing."""

from __future__ import annotations

from tui_agent.core.formats import plural
from tui_agent.core.recordings.recorded_spend import MISS_REASONS
from tui_agent.report.table import STRATEGIES
from tui_agent.report.totals import CAUSES, LABELS, MISS_KEY, RECORDED, Totals

# the reasons a cache missed, the recorded agent's (`recorded_spend.MISS_REASONS`, its own compactions as
# "compaction") and a replayed strategy's (its idle gaps and its compactions)
MISS_WORDS = {"ttl_expired": "after idle past the cache's TTL", "compaction": "after a compaction",
              "model_changed": "after a model switch", "unknown": "unexplained"}


def usd(value: float) -> str:
    return f"${value:,.2f}" if abs(value) >= 0.995 or value == 0 else f"${value:.4f}"


def summary_text(t: Totals) -> str:
    lines = [f"{plural(t.sessions, 'session')} replayed, {plural(t.calls, 'model call')}"
             + (f"; {plural(len(t.unreadable), 'session')} could not be read (below)" if t.unreadable else "")
             + (f"; {t.unpriced} with no list price for their model (left out of the money)" if t.unpriced else "")]
    recorded, ours, append = t.agents[RECORDED], t.agents["ours"], t.agents["append_only"]
    if recorded.usd:
        change = (ours.usd - recorded.usd) / recorded.usd
        lines += [f"spent at list prices: {usd(recorded.usd + t.output_usd)} ({usd(recorded.usd)} input, "
                  f"{usd(t.output_usd)} output)",
                  f"tui-agent would have spent {usd(ours.usd)} on the input side ({change:+.0%}); "
                  f"append-only {usd(append.usd)}; the output is the same replies either way"]
    lines.append("")
    lines.append(f"{'input side by cause':<26}" + "".join(f"{c:>15}" for c in CAUSES) + f"{'total':>13}")
    for name in (RECORDED, *STRATEGIES):
        agent = t.agents[name]
        lines.append(f"{LABELS[name]:<26}" + "".join(f"{usd(agent.causes[c]):>15}" for c in CAUSES)
                     + f"{usd(agent.usd):>13}")
    if ours.pings:
        lines.append(f"tui-agent's {plural(ours.pings, 'ping')} cost {usd(ours.causes['pings'])} and spared "
                     f"{usd(ours.spared)} of rewrites after idle")
    lines.append("")
    lines.append("the recorded agent's cache misses: " + (", ".join(
        f"{usd(t.miss_usd[r])} {MISS_WORDS[MISS_KEY.get(r, r)]} ({recorded.misses.get(MISS_KEY.get(r, r), 0) / 1e6:.1f}M tokens)"
        for r in MISS_REASONS if t.miss_usd[r] or recorded.misses.get(MISS_KEY.get(r, r))) or "none"))
    lines.append("what each agent forgot (share of what its next replies used that had left its request): "
                 + ", ".join(f"{LABELS[n]} {1 - t.agents[n].coverage:.1%}" for n in (RECORDED, *STRATEGIES)))
    if t.prompts_before or t.paths_before:
        lines.append(f"the recorded agent's own summaries dropped {t.forgot_prompts} of {t.prompts_before} prompts "
                     f"and {t.forgot_paths} of {t.paths_before} file paths before them")
    if t.costly:
        lines += ["", "the sessions that cost most:"]
        lines += [f"  {usd(c.recorded_usd):>10}  {c.path}\n              {c.why}" for c in t.costly]
    if t.unreadable:
        lines += ["", f"could not be read ({len(t.unreadable)}):"]
        lines += [f"  {row.path}: {row.error}" for row in t.unreadable]
    return "\n".join(lines)
