#!/bin/bash
# Measures how pipewire-jack's and jackd2's clocks behave (docs/pipewire.md): a private
# headless PipeWire (own XDG_RUNTIME_DIR, dbus-daemon, pipewire with a 48 kHz null sink,
# wireplumber) and a private jackd with the dummy backend, probed by jack-clock-probe.c.
# Usage: bash docs/tools/pipewire-clock-measure.sh [OUTDIR]   (about 2 minutes)
# Needs: pipewire pipewire-jack pipewire-bin wireplumber dbus jackd2 jack-tools, cc, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(mktemp -d /tmp/pwclock.XXXXXX)}
mkdir -p "$out"
work=$(mktemp -d /tmp/pwclock-run.XXXXXX)
pids=()
cleanup() {
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; wait "${pids[i]}" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -Wall -Wextra -o "$work/probe" "$here/jack-clock-probe.c" $(pkg-config --cflags --libs jack)
summary() { python3 "$here/jack-clock-summary.py" "$1" 12 | tee "$1.summary"; }

echo "=== PipeWire $(pipewire --version | tail -1)"
export XDG_RUNTIME_DIR=$work/run XDG_CONFIG_HOME=$work/config XDG_STATE_HOME=$work/state
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/run/bus
unset JACK_DEFAULT_SERVER PIPEWIRE_REMOTE PIPEWIRE_QUANTUM
mkdir -p -m 700 "$XDG_RUNTIME_DIR"; mkdir -p "$XDG_CONFIG_HOME/pipewire/pipewire.conf.d" "$XDG_STATE_HOME"
cat > "$XDG_CONFIG_HOME/pipewire/pipewire.conf.d/50-null-sink.conf" <<'CONF'
context.objects = [
    { factory = adapter
      args = { factory.name = support.null-audio-sink  node.name = "sink"  node.description = "sink"
               media.class = "Audio/Sink"  audio.position = [ FL FR ]  audio.rate = 48000
               object.linger = true  monitor.channel-volumes = false } }
]
CONF
dbus-daemon --session --nofork --nopidfile --address="$DBUS_SESSION_BUS_ADDRESS" > "$out/dbus.log" 2>&1 & pids+=($!)
until [ -S "$XDG_RUNTIME_DIR/bus" ]; do sleep 0.01; done
pipewire > "$out/pipewire.log" 2>&1 & pids+=($!)
until [ -S "$XDG_RUNTIME_DIR/pipewire-0" ]; do sleep 0.01; done
wireplumber > "$out/wireplumber.log" 2>&1 & pids+=($!)
until pw-jack jack_lsp 2>/dev/null | grep -q '^sink:monitor_FR$'; do sleep 0.02; done
P=sink:playback_FL,sink:playback_FR
quantum() { pw-metadata -n settings 0 clock.force-quantum "$1" > /dev/null; }

echo "--- (a) first client of the idle sink, quantum 1024 (PipeWire's default), connected after 100 cycles"
pw-jack "$work/probe" -t 4 -c $P -C 100 > "$out/pw-a1.txt"; summary "$out/pw-a1.txt"
echo "--- (a) again: the drivers' counters resume where they stopped"
pw-jack "$work/probe" -t 4 -c $P -C 100 > "$out/pw-a2.txt"; summary "$out/pw-a2.txt"
echo "--- (b) quantum changes 1024 -> 256 -> 512 -> 64 -> 2048 -> 128 while connected"
quantum 1024
pw-jack "$work/probe" -t 7 -c $P > "$out/pw-b.txt" & p=$!
for q in 256 512 64 2048 128; do sleep 1; quantum $q; done; wait $p; summary "$out/pw-b.txt"
echo "--- (c) steady state, 30 s at quantum 256"
quantum 256
pw-jack "$work/probe" -t 30 -c $P > "$out/pw-c.txt"; summary "$out/pw-c.txt"
echo "--- (d) overrun: cycle 500 sleeps two periods"
pw-jack "$work/probe" -t 5 -s 500 -c $P > "$out/pw-d.txt"; summary "$out/pw-d.txt"
echo "--- (d) which cycles were played: markers (-m) recorded from the sink monitor, cycle 100 sleeps two periods"
pw-jack jack-record -n 1 "$work/markers.wav" > "$out/jack-record.log" 2>&1 & rec=$!
until pw-jack jack_lsp | grep -q "^jack-record-$rec:in_1$"; do sleep 0.01; done
pw-jack jack_connect sink:monitor_FL "jack-record-$rec:in_1"
pw-jack "$work/probe" -m -t 2 -s 100 -c $P > "$out/pw-d-markers.txt"; summary "$out/pw-d-markers.txt"
sleep 0.3; kill -INT $rec; wait $rec || true
python3 - "$work/markers.wav" <<'PY' | tee "$out/pw-d-markers.played"
import array, struct, sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"data"); n = struct.unpack("<I", d[i + 4:i + 8])[0]
a = array.array("f"); a.frombytes(d[i + 8:i + 8 + n // 4 * 4])
marks = [(k, round(v * 4096) - 1) for k, v in enumerate(a) if abs(v) > 1e-6]
print(f"{len(marks)} cycles played, first: cycle {marks[0][1]} at frame {marks[0][0]}")
for (f0, c0), (f1, c1) in zip(marks, marks[1:]):
    if c1 != c0 + 1 or f1 - f0 != 256:
        print(f"cycle {c0} at frame {f0}, then cycle {c1} at frame {f1} ({f1 - f0} frames later)")
PY
quantum 0
for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}"; wait "${pids[i]}" 2>/dev/null || true; done; pids=()

echo "=== jackd2 $(jackd --version 2>/dev/null | grep -o 'version [0-9.]*' | head -1), dummy backend"
export JACK_DEFAULT_SERVER=pwclock-$$
jackd --no-realtime -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p 256 > "$out/jackd.log" 2>&1 & pids+=($!)
until jack_lsp > /dev/null 2>&1; do sleep 0.05; done
J=system:playback_1,system:playback_2
echo "--- (a) connected after 100 cycles; (b) jack_bufsize 256 -> 128 -> 1024"
"$work/probe" -t 6 -c $J -C 100 > "$out/jack-ab.txt" & p=$!
sleep 2; jack_bufsize 128 > /dev/null; sleep 2; jack_bufsize 1024 > /dev/null; wait $p; summary "$out/jack-ab.txt"
jack_bufsize 256 > /dev/null
echo "--- (c) steady state, 30 s at 256"
"$work/probe" -t 30 -c $J > "$out/jack-c.txt"; summary "$out/jack-c.txt"
echo "--- (d) overrun: cycle 300 sleeps two periods"
"$work/probe" -t 5 -s 300 -c $J > "$out/jack-d.txt"; summary "$out/jack-d.txt"
echo "raw logs in $out"
