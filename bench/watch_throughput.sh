#!/usr/bin/env bash
# Sustained throughput of `rlctl watch` on one core: a generated log of LINES
# lines is replayed with `--from-start` by a release `rlctl watch` pinned to
# one CPU (taskset), and the script times it from start until `/metrics` shows
# every line read and every request decided (the reorder buffer empty). Prints
# per run the lines per second of wall time and per second of the watch's own
# CPU time (user + system, all threads: the rate on a core of its own, whatever
# else the machine runs), and their medians; docs/watch.md has the figures.
#
# Usage: bench/watch_throughput.sh              (5,000,000 lines, 3 runs)
#   LINES=1000000 RUNS=5 bench/watch_throughput.sh
# Environment:
#   LINES      lines of the generated log (default 5000000)
#   RUNS       runs (default 3)
#   CPU        the CPU to pin the watch to (default 0)
#   FORMAT     combined, or an nginx log_format (default: combined)
#   BENCH_DIR  where the log and policy are written and reused (default /tmp/rlctl-watch-bench)
#   RLCTL      the binary (default: cargo build --release, then use it)
set -euo pipefail

LINES=${LINES:-5000000}
RUNS=${RUNS:-3}
CPU=${CPU:-0}
FORMAT=${FORMAT:-combined}
BENCH_DIR=${BENCH_DIR:-/tmp/rlctl-watch-bench}
mkdir -p "$BENCH_DIR"
cd "$(dirname "$0")/.."
if [[ -z "${RLCTL:-}" ]]; then
    cargo build --release --quiet --bin rlctl
    RLCTL="${CARGO_TARGET_DIR:-target}/release/rlctl"
fi

LOG="$BENCH_DIR/gen-$LINES-$(echo "$FORMAT" | md5sum | cut -c1-8).log"
[[ -s "$LOG" ]] || "$RLCTL" generate --lines "$LINES" --clients 2000 --seed 1 --format "$FORMAT" -o "$LOG"
POLICY="$BENCH_DIR/policy.toml"
cat >"$POLICY" <<'EOF'
[[rule]]
name = "global"
limit = "600/1m"
burst = 60
algorithm = "token-bucket"

[[rule]]
name = "api"
route = "^/api/"
limit = "100/10s"
algorithm = "fixed-window"

[[rule]]
name = "writes"
method = "POST"
limit = "20/1m"
algorithm = "sliding-log"
EOF
format_flag=()
[[ "$FORMAT" == combined ]] || format_flag=(--log-format "$FORMAT")
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

rates=()
cpu_rates=()
for run in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    taskset -c "$CPU" "$RLCTL" watch "$LOG" --policy "$POLICY" "${format_flag[@]}" \
        --from-start --max-delay 1s --format none --quiet --listen "127.0.0.1:$PORT" &
    pid=$!
    while sleep 0.05; do
        m=$(curl -s --max-time 2 "http://127.0.0.1:$PORT/metrics" || true)
        lines=$(awk '/^rlctl_lines_total/ {s += $2} END {print s + 0}' <<<"$m")
        decided=$(awk '$1 == "rlctl_requests_total{rule=\"global\"}" {print $2}' <<<"$m")
        pending=$(awk '$1 == "rlctl_reorder_pending" {print $2}' <<<"$m")
        [[ "$lines" == "$LINES" && "$decided" == "$LINES" && "$pending" == 0 ]] && break
        kill -0 "$pid" 2>/dev/null || { echo "rlctl watch exited" >&2; exit 1; }
    done
    end=$(date +%s.%N)
    cpu=$(awk '{print ($14 + $15)}' "/proc/$pid/stat")
    rss=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    secs=$(awk -v s="$start" -v e="$end" 'BEGIN {printf "%.2f", e - s}')
    cpu_s=$(awk -v t="$cpu" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}')
    rate=$(awk -v n="$LINES" -v s="$secs" 'BEGIN {printf "%.0f", n / s}')
    cpu_rate=$(awk -v n="$LINES" -v c="$cpu_s" 'BEGIN {printf "%.0f", n / c}')
    rates+=("$rate")
    cpu_rates+=("$cpu_rate")
    echo "run $run: $LINES lines in $secs s = $rate lines/s; cpu $cpu_s s = $cpu_rate lines per cpu second; peak rss $((rss / 1024)) MB"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "median: $(median "${rates[@]}") lines/s wall, $(median "${cpu_rates[@]}") lines per cpu second (pinned to CPU $CPU of $(nproc)); load: $(uptime | sed 's/.*load average: //')"
