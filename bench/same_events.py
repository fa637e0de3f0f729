#!/usr/bin/env python3
"""Whether two timeline or Chrome trace files of `pipewright simulate` hold
the same events, in whatever order they list them.

    bench/same_events.py A.json B.json

The order of a timeline's events and the numbers of a trace's flow arrows
(send -> receive) follow the order in which the simulator visited the ranks,
which a faster simulator may change; everything else must be equal. Exit 0
when the same, 1 (and what differs) when not.
"""
import json
import sys


def canonical(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    key = "events" if "events" in doc else "traceEvents"
    events = doc.pop(key)
    flows = {}
    plain = []
    for e in events:
        if e.get("ph") in ("s", "f"):
            # A flow is its start and its end; its id only pairs them.
            flows.setdefault(e["id"], {})[e["ph"]] = {k: v for k, v in e.items() if k != "id"}
        else:
            plain.append(json.dumps(e, sort_keys=True))
    pairs = sorted(json.dumps(f, sort_keys=True) for f in flows.values())
    return json.dumps(doc, sort_keys=True), sorted(plain), pairs


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a = canonical(sys.argv[1])
    b = canonical(sys.argv[2])
    parts = ("everything but the events", "events", "flow arrows")
    different = [name for name, x, y in zip(parts, a, b) if x != y]
    if different:
        print(f"{sys.argv[1]} and {sys.argv[2]} differ in: {', '.join(different)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
