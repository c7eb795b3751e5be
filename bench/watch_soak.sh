#!/usr/bin/env bash
# Soak of `rlctl watch`: a generated access log is appended at RATE lines/s for
# DURATION seconds (rotated by rename-and-create every ROTATE seconds) while a
# release `rlctl watch` follows it. Every SAMPLE seconds the script reads
# `rlctl_lag_seconds` from /metrics and the process's resident memory
# (VmRSS); at the end it checks that every generated line was read and prints
# lag max/p99, RSS at start/end/max, the CPU time of the watch and the machine
# load (`uptime`). docs/watch.md has the figures of the last full run.
#
# Usage: bench/watch_soak.sh                 (50,000 lines/s for 10 minutes)
#   RATE=20000 DURATION=60 bench/watch_soak.sh
# Environment:
#   RATE       lines per second appended (default 50000)
#   DURATION   seconds of appending (default 600)
#   SAMPLE     seconds between samples (default 10)
#   ROTATE     seconds between rotations, 0 for none (default 60)
#   CLIENTS    distinct client addresses (default 20000)
#   SOAK_DIR   where the log, the policy and the samples go (default: a new temp dir)
#   RLCTL      the binary (default: cargo build --release, then use it)
set -euo pipefail

RATE=${RATE:-50000}
DURATION=${DURATION:-600}
SAMPLE=${SAMPLE:-10}
ROTATE=${ROTATE:-60}
CLIENTS=${CLIENTS:-20000}
SOAK_DIR=${SOAK_DIR:-$(mktemp -d /tmp/rlctl-soak.XXXXXX)}
mkdir -p "$SOAK_DIR"
cd "$(dirname "$0")/.."

if [[ -z "${RLCTL:-}" ]]; then
    cargo build --release --quiet --bin rlctl
    RLCTL="${CARGO_TARGET_DIR:-target}/release/rlctl"
fi

LOG="$SOAK_DIR/access.log"
POLICY="$SOAK_DIR/policy.toml"
SAMPLES="$SOAK_DIR/samples.tsv"
FORMAT='$msec $remote_addr "$request" $status'
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$POLICY" <<'EOF'
[[rule]]
name = "per-client"
limit = "600/1m"
burst = 60
algorithm = "token-bucket"

[[rule]]
name = "api"
route = "^/api/"
limit = "100/10s"
algorithm = "fixed-window"

[[rule]]
name = "login"
method = "POST"
route = "^/login"
limit = "5/1m"
algorithm = "sliding-log"
EOF
: >"$LOG"

"$RLCTL" watch "$LOG" --policy "$POLICY" --log-format "$FORMAT" \
    --format none --quiet --listen "127.0.0.1:$PORT" &
WATCH=$!
GEN=
cleanup() {
    [[ -n "$GEN" ]] && kill "$GEN" 2>/dev/null || true
    kill "$WATCH" 2>/dev/null || true
}
trap cleanup EXIT

metrics() { curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics"; }
for _ in $(seq 50); do metrics >/dev/null && break; sleep 0.1; done
kill -0 "$WATCH" 2>/dev/null || { echo "rlctl watch did not start" >&2; exit 1; }

# The generator: RATE lines/s stamped with the wall clock, in 10 ms batches.
python3 - "$LOG" "$RATE" "$DURATION" "$ROTATE" "$CLIENTS" >"$SOAK_DIR/generated" <<'EOF' &
import os, random, sys, time
log, rate, duration, rotate, clients = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rng = random.Random(1)
addrs = [f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}" for i in range(clients)]
# A few heavy clients, many light ones.
weights = [50.0 if i < 20 else 1.0 for i in range(clients)]
requests = ['"GET / HTTP/1.1" 200', '"GET /api/items HTTP/1.1" 200', '"GET /static/a.css HTTP/1.1" 200',
            '"POST /login HTTP/1.1" 401', '"GET /api/items/42 HTTP/1.1" 200']
out = open(log, "a")
start = time.time()
written, rotated_at = 0, start
while True:
    now = time.time()
    if now - start >= duration:
        break
    if rotate > 0 and now - rotated_at >= rotate:
        out.close()
        os.replace(log, log + ".1")
        out = open(log, "a")
        rotated_at = now
    due = int((now - start) * rate) - written
    if due > 0:
        stamp = f"{now:.3f}"
        who = rng.choices(addrs, weights, k=due)
        out.write("".join(f"{stamp} {a} {rng.choice(requests)}\n" for a in who))
        out.flush()
        written += due
    time.sleep(0.01)
out.close()
print(written)
EOF
GEN=$!

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$WATCH/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$WATCH/stat"; }
LOAD_START=$(uptime)
printf 'elapsed_s\tlag_s\trss_kb\tlines\n' >"$SAMPLES"
started=$(date +%s)
while kill -0 "$GEN" 2>/dev/null; do
    sleep "$SAMPLE"
    kill -0 "$GEN" 2>/dev/null || break
    kill -0 "$WATCH" 2>/dev/null || { echo "rlctl watch exited" >&2; exit 1; }
    m=$(metrics || true)
    lag=$(awk '$1 == "rlctl_lag_seconds" {print $2}' <<<"$m")
    lines=$(awk '/^rlctl_lines_total/ {s += $2} END {print s + 0}' <<<"$m")
    printf '%s\t%s\t%s\t%s\n' "$(($(date +%s) - started))" "${lag:-NA}" "$(rss_kb)" "$lines" | tee -a "$SAMPLES"
done
wait "$GEN"
GEN=
LOAD_END=$(uptime)
generated=$(cat "$SOAK_DIR/generated")

# Let the watch read the last lines (up to 5 minutes when it fell behind),
# then compare the counts.
lines=0
caught_up=$(date +%s.%N)
for _ in $(seq 1500); do
    lines=$(metrics | awk '/^rlctl_lines_total/ {s += $2} END {print s + 0}')
    [[ "$lines" == "$generated" ]] && break
    sleep 0.2
done
caught_up=$(awk -v s="$caught_up" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
ticks=$(cpu_ticks)
hz=$(getconf CLK_TCK)

echo
echo "rate ${RATE} lines/s for ${DURATION} s, rotation every ${ROTATE} s, ${CLIENTS} clients"
echo "generated ${generated} lines; rlctl_lines_total ${lines} (${caught_up} s after the generator stopped)"
awk -F'\t' 'NR > 1 && $2 != "NA" {print $2}' "$SAMPLES" | sort -g | awk '
    {v[NR] = $1} END {
        if (NR == 0) { print "no lag sample"; exit }
        i = int(NR * 0.99 + 0.999); if (i > NR) i = NR
        printf "lag: %d samples, median %.3f s, p99 %.3f s, max %.3f s\n", NR, v[int((NR + 1) / 2)], v[i], v[NR]
    }'
awk -F'\t' 'NR == 2 {s = $3} NR > 1 {e = $3; if ($3 > m) m = $3} END {
    printf "rss: start %.1f MB, end %.1f MB, max %.1f MB\n", s / 1024, e / 1024, m / 1024
}' "$SAMPLES"
echo "watch cpu: $(awk -v t="$ticks" -v hz="$hz" -v d="$DURATION" 'BEGIN {printf "%.1f s (%.0f%% of one core)", t / hz, 100 * t / hz / d}')"
echo "load at start: $LOAD_START"
echo "load at end:   $LOAD_END"
echo "samples: $SAMPLES"
[[ "$lines" == "$generated" ]] || { echo "lines lost: generated $generated, read $lines" >&2; exit 1; }
