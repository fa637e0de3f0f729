"""What simulate(), plan() and compare_schedules() return: the command line's
JSON as attributes, with text and HTML for people and DataFrames for pandas."""

from __future__ import annotations

import copy
import html
import os
from typing import Any, Optional


def format_duration(seconds: Optional[float]) -> str:
    """"27.3 ms", "262 µs", "56.4 s", as the command line writes durations."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns" if seconds else "0 s"


def format_bytes(count: Optional[float]) -> str:
    if count is None:
        return "-"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(count) >= scale:
            return f"{count / scale:.2f} {unit}"
    return f"{count:.0f} B"


def format_percent(fraction: Optional[float]) -> str:
    return "-" if fraction is None else f"{100 * fraction:.1f} %"


def _html_table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pandas():
    try:
        import pandas
    except ImportError as missing:
        raise ImportError("to_pandas() needs pandas (Debian: apt install python3-pandas)") \
            from missing
    return pandas


class SimulationResult:
    """One simulated iteration, as ``pipewright simulate --json`` reports it.

    ``to_dict()`` is that JSON; the figures are attributes too
    (``iteration_time_s``, ``bubble``, ``throughput``, ``devices``, ``links``,
    ``stages``). ``timeline`` lists every action with its times; it is
    simulated again on first use (large projects have millions of actions),
    with the same figures. ``print(result)`` shows the command line's summary.
    """

    def __init__(self, run: Any):
        self._run = run
        self._report = run.to_dict()
        self._events: Optional[list[dict]] = None

    def to_dict(self) -> dict:
        return copy.deepcopy(self._report)

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._report[key])

    @property
    def schedule(self) -> str:
        return self._report["schedule"]

    @property
    def microbatches(self) -> int:
        return self._report["microbatches"]

    @property
    def microbatch_size(self) -> int:
        return self._report["microbatch_size"]

    @property
    def batch_size(self) -> int:
        return self._report["batch_size"]

    @property
    def iteration_time_s(self) -> float:
        return self._report["iteration_time_s"]

    @property
    def steady_state_iteration_s(self) -> float:
        return self._report["steady_state_iteration_s"]

    @property
    def throughput(self) -> float:
        """Samples per second."""
        return self._report["throughput_samples_per_s"]

    @property
    def bubble(self) -> float:
        """The fraction of device time spent idle (0 to 1)."""
        return self._report["bubble_fraction"]

    @property
    def all_fit(self) -> bool:
        return self._report["all_fit"]

    @property
    def devices(self) -> list[dict]:
        """Per device: rank, name, spec, busy_s, start_s, end_s, bubble_fraction,
        peak_memory_bytes, memory_capacity_bytes, fits."""
        return copy.deepcopy(self._report["devices"])

    @property
    def links(self) -> list[dict]:
        """Links that carried data: name, bytes, busy_s, transfers."""
        return copy.deepcopy(self._report["links"])

    @property
    def stages(self) -> list[dict]:
        """Per stage: its device, layers and what each pass costs, kernel by kernel."""
        return copy.deepcopy(self._report["stages"])

    @property
    def timeline(self) -> list[dict]:
        """Every action: rank, device, action ("2F0"), stage, microbatch, type ("F",
        "SEND_B", "REDUCE_GRAD"), start_s, end_s, bytes, peer_rank."""
        if self._events is None:
            self._events = self._run.events()
        return self._events

    @property
    def memory(self) -> dict[str, list[tuple[float, int]]]:
        """Per device lane: (time_s, bytes) from which it holds that much memory."""
        return self._run.memory()

    def to_pandas(self):
        """The timeline as a pandas.DataFrame, one row per action."""
        columns = ["rank", "device", "action", "stage", "microbatch", "type", "start_s",
                   "end_s", "bytes", "peer_rank"]
        return _pandas().DataFrame(self.timeline, columns=columns)

    def plot(self, ax: Any = None, *, title: Optional[str] = None):
        """The timeline as a Gantt chart (matplotlib); returns the Axes."""
        from ._plot import gantt
        return gantt(self.timeline, [d["name"] for d in self._report["devices"]], ax=ax,
                     title=title if title is not None else repr(self))

    def save(self, *, trace: Optional[str] = None, timeline: Optional[str] = None,
             schedule_csv: Optional[str] = None, csv_format: Optional[str] = None,
             max_output_bytes: int = 1 << 30) -> None:
        """Writes what ``simulate --trace/--timeline/--export-csv`` write: a Chrome
        trace (Perfetto), the Timeline JSON, the schedule as PyTorch's CSV
        (``csv_format`` "compute-only" or "compute-comms" for torch's loader)."""
        def path(value):
            return None if value is None else os.fspath(value)
        self._run.save(path(trace), path(timeline), path(schedule_csv), csv_format,
                       max_output_bytes)

    def __str__(self) -> str:
        return self._run.text()

    def __repr__(self) -> str:
        fits = "every device fits" if self.all_fit else "over memory"
        return (f"<SimulationResult {self.schedule} · {self.microbatches} micro-batches of "
                f"{self.microbatch_size} · {format_duration(self.iteration_time_s)} · "
                f"{self.throughput:,.0f} samples/s · bubble {format_percent(self.bubble)} · "
                f"{fits}>")

    def _repr_html_(self) -> str:
        rows = [[d["rank"], d["name"], d["spec"], format_duration(d["busy_s"]),
                 format_percent(d["bubble_fraction"]), format_bytes(d["peak_memory_bytes"]),
                 format_bytes(d["memory_capacity_bytes"]), "yes" if d["fits"] else "NO"]
                for d in self._report["devices"]]
        head = html.escape(repr(self)[1:-1])
        return f"<p><b>{head}</b></p>" + _html_table(
            ["rank", "device", "spec", "busy", "bubble", "peak memory", "capacity", "fits"], rows)


class PlanResult:
    """A plan, as ``pipewright plan --json`` reports it (``to_dict()``).

    ``project`` is the input project with the plan applied (what ``--apply``
    writes), None when nothing fits (``feasible`` False, ``reason`` says why).
    ``table`` lists the planned stages; ``explanation`` says in words why
    this plan: its gains, and the best each schedule (and layout) reached.
    """

    def __init__(self, report: dict, project: Any):
        self._report = report
        self.project = project

    def to_dict(self) -> dict:
        return copy.deepcopy(self._report)

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._report[key])

    @property
    def feasible(self) -> bool:
        return self._report["feasible"]

    @property
    def reason(self) -> str:
        """Why nothing fits (empty for a feasible plan)."""
        return self._report.get("reason", "")

    @property
    def schedule(self) -> Optional[str]:
        return self._report.get("schedule")

    @property
    def microbatches(self) -> Optional[int]:
        return self._report.get("microbatches")

    @property
    def iteration_time_s(self) -> Optional[float]:
        return self._report.get("iteration_time_s")

    @property
    def throughput(self) -> Optional[float]:
        return self._report.get("throughput_samples_per_s")

    @property
    def bubble(self) -> Optional[float]:
        return self._report.get("bubble_fraction")

    @property
    def placement(self) -> list[dict]:
        """Per stage: stage, device, first_layer, last_layer, layers (names)."""
        return copy.deepcopy(self._report.get("placement", []))

    @property
    def table(self) -> list[dict]:
        """The planned stages with their figures, one dict per stage."""
        devices = {d["name"]: d for d in self._report.get("devices", [])}
        rows = []
        for stage in self._report.get("placement", []):
            device = devices.get(stage["device"], {})
            rows.append({
                "stage": stage["stage"],
                "device": stage["device"],
                "layers": f"{stage['first_layer']}-{stage['last_layer']}",
                "first": stage["layers"][0] if stage["layers"] else "",
                "last": stage["layers"][-1] if stage["layers"] else "",
                "busy_s": device.get("busy_s"),
                "peak_memory_bytes": device.get("peak_memory_bytes"),
                "memory_capacity_bytes": device.get("memory_capacity_bytes"),
                "fits": device.get("fits"),
            })
        return rows

    @property
    def explanation(self) -> str:
        r = self._report
        if not r["feasible"]:
            return f"Nothing fits: {r.get('reason', '').strip()}"
        lines = [f"Chosen {r['schedule']} · {r['microbatches']} micro-batches of "
                 f"{r['microbatch_size']} · {len(r['placement'])} stages",
                 f"Iteration {format_duration(r['iteration_time_s'])} · "
                 f"{r['throughput_samples_per_s']:,.0f} samples/s · bubble "
                 f"{format_percent(r['bubble_fraction'])}"]
        gains = []
        for key, words in (("baseline", "the input placement"), ("uniform", "a uniform split")):
            other = r.get(key, {})
            if "gain_percent" in other:
                gains.append(f"{other['gain_percent']:+.1f} % over {words}")
            elif other.get("reason"):
                gains.append(f"{words} cannot run: {other['reason']}")
        if gains:
            lines.append("Gain " + ", ".join(gains))
        if len(r.get("schedules", [])) > 1:
            tried = " · ".join(
                f"{s['schedule']} {format_duration(s['iteration_time_s'])}"
                if s["iteration_time_s"] is not None else f"{s['schedule']} does not fit"
                for s in r["schedules"])
            lines.append(f"Schedules {tried} (fastest simulated split of each)")
        if r.get("data_parallel", {}).get("choice"):
            lines.append("Layout " + r["data_parallel"]["choice"])
        if r.get("interrupted"):
            lines.append("Interrupted: the best of the layouts planned before the stop")
        return "\n".join(lines)

    def to_pandas(self):
        """The planned stages (``table``) as a pandas.DataFrame."""
        return _pandas().DataFrame(self.table)

    def __str__(self) -> str:
        if not self.feasible:
            return self.explanation
        rows = [f"{row['stage']:>5}  {row['device']}  {row['layers']}  {row['first']} … "
                f"{row['last']}  {format_duration(row['busy_s'])}  "
                f"{format_bytes(row['peak_memory_bytes'])} of "
                f"{format_bytes(row['memory_capacity_bytes'])}  "
                f"{'fits' if row['fits'] else 'DOES NOT FIT'}" for row in self.table]
        return self.explanation + "\n\n" + "\n".join(rows)

    def __repr__(self) -> str:
        if not self.feasible:
            return "<PlanResult: nothing fits>"
        r = self._report
        return (f"<PlanResult {r['schedule']} · {r['microbatches']} micro-batches · "
                f"{len(r['placement'])} stages · {format_duration(r['iteration_time_s'])}>")

    def _repr_html_(self) -> str:
        explanation = "<br>".join(html.escape(line) for line in self.explanation.splitlines())
        if not self.feasible:
            return f"<p>{explanation}</p>"
        rows = [[row["stage"], row["device"], row["layers"], f"{row['first']} … {row['last']}",
                 format_duration(row["busy_s"]), format_bytes(row["peak_memory_bytes"]),
                 format_bytes(row["memory_capacity_bytes"]), "yes" if row["fits"] else "NO"]
                for row in self.table]
        return f"<p>{explanation}</p>" + _html_table(
            ["stage", "device", "layers", "", "busy", "peak memory", "capacity", "fits"], rows)


class ScheduleComparison:
    """Every schedule on the project's layout and the single-device baseline,
    as ``simulate --compare-schedules --json`` lists them (``to_dict()``)."""

    def __init__(self, rows: list[dict], table: str):
        self._rows = rows
        self._table = table

    def to_dict(self) -> list[dict]:
        return copy.deepcopy(self._rows)

    @property
    def rows(self) -> list[dict]:
        return copy.deepcopy(self._rows)

    @property
    def fastest(self) -> Optional[dict]:
        """The applicable row with the shortest iteration whose devices all fit."""
        fitting = [r for r in self._rows if r["applicable"] and r["all_fit"]]
        return copy.deepcopy(min(fitting, key=lambda r: r["iteration_time_s"])) if fitting \
            else None

    def to_pandas(self):
        columns = ["schedule", "applicable", "baseline", "microbatches", "iteration_time_s",
                   "throughput_samples_per_s", "bubble_fraction", "all_fit", "gain_percent",
                   "reason"]
        return _pandas().DataFrame([{c: r.get(c) for c in columns} for r in self._rows],
                                   columns=columns)

    def __str__(self) -> str:
        return self._table

    def __repr__(self) -> str:
        best = self.fastest
        return (f"<ScheduleComparison of {len(self._rows)} rows; fastest "
                f"{best['schedule'] if best else 'none'}>")

    def _repr_html_(self) -> str:
        rows = [[r["schedule"], r.get("microbatches", "-"),
                 format_duration(r.get("iteration_time_s")),
                 format_percent(r.get("bubble_fraction")),
                 ("yes" if r.get("all_fit") else "NO") if r["applicable"] else "-",
                 "baseline" if r["baseline"] else
                 (f"{r['gain_percent']:+.1f} %" if "gain_percent" in r else r.get("reason", ""))]
                for r in self._rows]
        return _html_table(["schedule", "micro-batches", "iteration", "bubble", "fits", "gain"],
                           rows)
