#!/usr/bin/env python3
"""Summarises jack-clock-probe output: every cycle whose clock does not follow from the one
before, and the statistics of the steady cycles.

    python3 jack-clock-summary.py probe-output.txt [max-lines]

For consecutive cycles p, c it checks: frames(c) - frames(p) == nframes(p) (the frame counter
advances by exactly the previous cycle's size), usecs(c) == next_usecs(p) (the cycle starts
where the previous one said the next would), and last_frame_time == cycle frames. It prints
each cycle that breaks one of them, with the events (xrun X, buffer size B, connect K) between."""
import sys
from collections import Counter

path = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 40
cycles, events = [], []
for line in open(path):
    f = line.split()
    if not f:
        continue
    if f[0] == "C":
        cycles.append(dict(i=int(f[1]), n=int(f[2]), fr=int(f[3]), us=int(f[4]), nx=int(f[5]), per=float(f[6]),
                           lft=int(f[7]), ft=int(f[8]), jt=int(f[9]), mono=int(f[10]), raw=int(f[11])))
    elif f[0] in "XBK":
        events.append((f[0], int(f[1]), int(f[2]), int(f[3])))

print(f"{len(cycles)} cycles, {cycles[-1]['mono'] - cycles[0]['mono'] if cycles else 0} us of CLOCK_MONOTONIC")
print("events:", " ".join(f"{k}@{i}{'(' + str(n) + ')' if k == 'B' else ''}" for k, i, n, _ in events) or "none")
odd = 0
dframes = Counter()
dus_err = []
for p, c in zip(cycles, cycles[1:]):
    df = (c["fr"] - p["fr"]) & 0xFFFFFFFF
    if df >= 1 << 31:
        df -= 1 << 32
    dus = c["us"] - p["us"]
    gap = c["us"] - p["nx"]
    dframes[df - p["n"]] += 1
    if df == p["n"] and c["n"] == p["n"] and c["lft"] == c["fr"]:
        dus_err.append(dus - p["per"])
    if df != p["n"] or abs(gap) > 2 or c["lft"] != c["fr"]:
        odd += 1
        if odd <= limit:
            evs = [k for k, i, _, _ in events if i == c["i"]]
            print(f"cycle {c['i']}: nframes {p['n']}->{c['n']}, frames {p['fr']}->{c['fr']} (d {df}, "
                  f"d-nframes {df - p['n']}), usecs {p['us']}->{c['us']} (d {dus}, start - predicted {gap}), "
                  f"period_usecs {p['per']:.3f}->{c['per']:.3f}, last_frame_time {c['lft']}, "
                  f"callback {c['mono'] - p['mono']} us after the previous" + (f", events {evs}" if evs else ""))
print(f"{odd} cycles break the rules above")
print("frame counter advance minus previous nframes: " + ", ".join(f"{k}: {v}x" for k, v in sorted(dframes.items())))
if dus_err:
    dus_err.sort()
    pick = lambda q: dus_err[min(len(dus_err) - 1, int(q * len(dus_err)))]
    print(f"steady cycles: usecs advance minus period_usecs, min {dus_err[0]:.1f} median {pick(0.5):.1f} "
          f"p99 {pick(0.99):.1f} max {dus_err[-1]:.1f} us")
jt_mono = Counter(c["jt"] - c["mono"] for c in cycles)
print("jack_get_time - CLOCK_MONOTONIC (us, read back to back): " + ", ".join(f"{k}: {v}x" for k, v in sorted(jt_mono.items())[:6]))
if cycles:
    a, b = cycles[0], cycles[-1]
    print(f"CLOCK_MONOTONIC - CLOCK_MONOTONIC_RAW: first {a['mono'] - a['raw']} us, last {b['mono'] - b['raw']} us")
    # The longest stretch of cycles that follow the rules: its frame rate in usecs.
    best, start = (0, 0), 0
    for k in range(1, len(cycles) + 1):
        if k == len(cycles) or ((cycles[k]["fr"] - cycles[k - 1]["fr"]) & 0xFFFFFFFF) != cycles[k - 1]["n"]:
            if k - start > best[1] - best[0]:
                best = (start, k)
            start = k
    s0, s1 = cycles[best[0]], cycles[best[1] - 1]
    rates = [(s1["fr"] - s0["fr"]) / ((s1["us"] - s0["us"]) / 1e6)] if s1["us"] > s0["us"] else []
    if rates:
        print(f"frames per second of usecs over the longest regular stretch ({best[1] - best[0]} cycles): {rates[0]:.3f}")
