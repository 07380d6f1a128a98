#!/usr/bin/env bash
# Runs a command with a JACK server at hand: the one already running, or a private one with
# the dummy backend (48 kHz, 256-frame periods) that is stopped afterwards.
set -euo pipefail
export JACK_NO_START_SERVER=1
if JACK_DEFAULT_SERVER="${JACK_DEFAULT_SERVER:-default}" timeout 5 jack_lsp >/dev/null 2>&1; then
  echo "with-jack: using the running JACK server '${JACK_DEFAULT_SERVER:-default}'"
  exec "$@"
fi
name="aqsync-demo-$$"
log=$(mktemp)
jackd --no-realtime -n "$name" -d dummy -r 48000 -p 256 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 50); do
  JACK_DEFAULT_SERVER="$name" jack_lsp >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { echo "with-jack: jackd failed to start:"; cat "$log"; exit 1; }
  sleep 0.1
done
echo "with-jack: started a private JACK server '$name' (dummy backend, 48 kHz, 256 frames)"
JACK_DEFAULT_SERVER="$name" "$@"
