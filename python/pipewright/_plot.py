"""The timeline as a Gantt chart, with matplotlib when it is installed."""

from __future__ import annotations

from typing import Any, Optional

# One colour per kind of action, in the studio's spirit: forwards blue,
# backwards warm, transfers grey, collectives purple.
COLOURS = {
    "F": "#4c78a8",
    "B": "#e45756",
    "I": "#f58518",
    "W": "#eeca3b",
    "SEND_F": "#bab0ac",
    "RECV_F": "#d8d2cf",
    "SEND_B": "#9d9592",
    "RECV_B": "#c9c2be",
    "UNSHARD": "#b279a2",
    "RESHARD": "#d6a5c9",
    "REDUCE_GRAD": "#8e6c8a",
}
COMPUTE = {"F", "B", "I", "W"}
LABELLED_EVENTS = 400  # beyond this many compute blocks, numbers are unreadable


def gantt(events: list[dict], devices: list[str], ax: Any = None,
          title: Optional[str] = None):
    try:
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError as missing:
        raise ImportError("plot() needs matplotlib (Debian: apt install python3-matplotlib)") \
            from missing
    lanes = {}
    for event in events:
        lanes.setdefault(event["rank"], event["device"])
    ranks = sorted(lanes)
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 0.5 + 0.45 * max(1, len(ranks))))
    end = max((e["end_s"] for e in events), default=0.0)
    scale, unit = (1e3, "ms") if end < 10 else (1.0, "s")
    row = {rank: i for i, rank in enumerate(ranks)}
    bars: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for event in events:
        bars.setdefault((event["rank"], event["type"]), []).append(
            (event["start_s"] * scale, (event["end_s"] - event["start_s"]) * scale))
    for (rank, kind), spans in bars.items():
        compute = kind in COMPUTE
        # Compute fills the lane; transfers and collectives a thin band under it.
        y, height = (row[rank] - 0.4, 0.6) if compute else (row[rank] + 0.22, 0.16)
        ax.broken_barh(spans, (y, height), facecolors=COLOURS.get(kind, "#888888"),
                       edgecolor="white" if compute else "none", linewidth=0.3)
    compute_events = [e for e in events if e["type"] in COMPUTE]
    if len(compute_events) <= LABELLED_EVENTS:
        for e in compute_events:
            ax.text((e["start_s"] + e["end_s"]) / 2 * scale, row[e["rank"]] - 0.1,
                    str(e["microbatch"]), ha="center", va="center", fontsize=7, color="white")
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([lanes[r] for r in ranks] if lanes else devices)
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, end * scale if end > 0 else 1)
    kinds = [k for k in COLOURS if any(kind == k for (_, kind) in bars)]
    # Beside the lanes, never over them.
    ax.legend(handles=[Patch(color=COLOURS[k], label=k) for k in kinds], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    if title:
        ax.set_title(title, fontsize=9)
    return ax
