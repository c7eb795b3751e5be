#!/usr/bin/env bash
# Whole-process benchmark of rlctl against `wc -l`, `gzip -dc` and GoAccess on
# the same generated inputs, in one run. Prints the median wall time of several
# runs with its spread, throughput, peak memory and the ratios the performance
# targets are stated in. The README section "Performance" has the figures.
#
# Usage: bench/run.sh            (5,000,000 lines, 5 runs each)
#   LINES=1000000 RUNS=3 bench/run.sh
# Environment:
#   LINES          lines per generated input (default 5000000)
#   RUNS           runs per command (default 5); GOACCESS_RUNS for GoAccess (default 3)
#   BENCH_DIR      where inputs are written and reused (default /tmp/rlctl-bench)
#   RLCTL          the binary to measure (default: cargo build --release, then use it)
#
# Release builds carry no debug info. To profile (perf record, flamegraphs) use
# the profiling profile, release code with line tables:
#   cargo build --profile profiling && perf record -g target/profiling/rlctl analyze ...
#   RLCTL=target/profiling/rlctl bench/run.sh   (to time that binary here)
#   SKIP_SIMULATE  set to 1 to leave out the simulate rows
#
# GoAccess is the Debian package `goaccess` (apt-get install goaccess); without
# it its row is skipped with a notice. Inputs are read once before measuring so
# that every command reads from the page cache.
set -euo pipefail

cd "$(dirname "$0")/.."
LINES=${LINES:-5000000}
RUNS=${RUNS:-5}
GOACCESS_RUNS=${GOACCESS_RUNS:-3}
BENCH_DIR=${BENCH_DIR:-/tmp/rlctl-bench}
CUSTOM='$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time'

if [[ -z "${RLCTL:-}" ]]; then
    cargo build --release --quiet
    RLCTL="${CARGO_TARGET_DIR:-target}/release/rlctl"
fi
[[ -x /usr/bin/time ]] || { echo "bench: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 2; }

mkdir -p "$BENCH_DIR"
COMBINED="$BENCH_DIR/combined-$LINES.log"
JSON="$BENCH_DIR/json-$LINES.log"
CUSTOM_LOG="$BENCH_DIR/custom-$LINES.log"
GZ="$COMBINED.gz"

generate() { # FILE FORMAT
    [[ -s "$1" ]] && return
    echo "bench: generating $1" >&2
    "$RLCTL" generate --lines "$LINES" --seed 1 --format "$2" -o "$1.part"
    mv "$1.part" "$1"
}
generate "$COMBINED" combined
generate "$JSON" json
generate "$CUSTOM_LOG" "$CUSTOM"
if [[ ! -s "$GZ" ]]; then
    echo "bench: compressing $GZ (gzip -6)" >&2
    gzip -6 -c "$COMBINED" > "$GZ.part" && mv "$GZ.part" "$GZ"
fi
cat "$COMBINED" "$JSON" "$CUSTOM_LOG" "$GZ" > /dev/null # into the page cache

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# measure NAME RUNS COMMAND: runs COMMAND (a bash string) RUNS times; leaves
# "median min max peak_rss_kb" in $TMP/NAME.
measure() {
    local name=$1 runs=$2 cmd=$3 i
    : > "$TMP/$name.runs"
    for ((i = 0; i < runs; i++)); do
        local start=$EPOCHREALTIME
        /usr/bin/time -f '%M' -o "$TMP/$name.one" bash -c "$cmd" > /dev/null 2>&1
        local end=$EPOCHREALTIME
        echo "$start $end $(cat "$TMP/$name.one")" | awk '{ printf "%.4f %s\n", $2 - $1, $3 }' >> "$TMP/$name.runs"
    done
    sort -n "$TMP/$name.runs" | awk '
        { t[NR] = $1; if ($2 > rss) rss = $2 }
        END {
            median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
            print median, t[1], t[NR], rss
        }' > "$TMP/$name"
    echo "bench: $name done ($(cat "$TMP/$name"))" >&2
}

size_mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }

measure wc "$RUNS" "wc -l '$COMBINED'"
measure gzip_dc "$RUNS" "gzip -dc '$GZ'"
if [[ "$GOACCESS_RUNS" == 0 ]]; then
    echo "bench: GOACCESS_RUNS=0: GoAccess skipped" >&2
elif command -v goaccess > /dev/null; then
    measure goaccess "$GOACCESS_RUNS" "goaccess '$COMBINED' --log-format=COMBINED -o '$TMP/report.json'"
else
    echo "bench: goaccess not installed (apt-get install goaccess): its row is skipped" >&2
fi
measure combined "$RUNS" "'$RLCTL' analyze -q --format json '$COMBINED'"
measure json "$RUNS" "'$RLCTL' analyze -q --format json '$JSON'"
measure custom "$RUNS" "'$RLCTL' analyze -q --format json --log-format '$CUSTOM' '$CUSTOM_LOG'"
measure gzip "$RUNS" "'$RLCTL' analyze -q --format json '$GZ'"
if [[ "${SKIP_SIMULATE:-}" != 1 ]]; then
    measure simulate "$RUNS" "'$RLCTL' simulate -q --algo all --limit 600/1m --format json '$COMBINED'"
    measure simulate_recommended "$RUNS" "'$RLCTL' simulate -q --algo all --format json '$COMBINED'"
fi

echo
echo "rlctl $("$RLCTL" --version | awk '{print $2}') ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$LINES lines per input; median of $RUNS runs (GoAccess: $GOACCESS_RUNS) with the fastest and slowest; MB = 10^6 bytes"
echo
printf '%-34s %9s %8s %15s %9s %9s %9s  %s\n' "command" "input MB" "median s" "spread s" "MB/s" "peak MB" "B/event" "ratio"
row() { # NAME LABEL FILE RATIO_TEXT
    local name=$1 label=$2 file=$3 ratio=${4:-}
    [[ -s "$TMP/$name" ]] || return 0
    read -r median min max rss < "$TMP/$name"
    local mb; mb=$(size_mb "$file")
    awk -v l="$label" -v mb="$mb" -v m="$median" -v lo="$min" -v hi="$max" -v rss="$rss" -v n="$LINES" -v r="$ratio" 'BEGIN {
        printf "%-34s %9.1f %8.3f %7.3f-%-7.3f %9.0f %9.0f %9.0f  %s\n",
            l, mb, m, lo, hi, (m > 0 ? mb / m : 0), rss / 1024, rss * 1024 / n, r
    }'
}
ratio() { # NAME_A NAME_B TEXT: "A is X times B" from median times
    [[ -s "$TMP/$1" && -s "$TMP/$2" ]] || return 0
    awk -v a="$(cut -d' ' -f1 "$TMP/$1")" -v b="$(cut -d' ' -f1 "$TMP/$2")" -v t="$3" \
        'BEGIN { if (b > 0) printf "%.2f x %s", a / b, t }'
}
speedup() { # NAME_FAST NAME_SLOW TEXT: "X times faster than"
    [[ -s "$TMP/$1" && -s "$TMP/$2" ]] || return 0
    awk -v a="$(cut -d' ' -f1 "$TMP/$1")" -v b="$(cut -d' ' -f1 "$TMP/$2")" -v t="$3" \
        'BEGIN { if (a > 0) printf "%.0f x faster than %s", b / a, t }'
}
row wc "wc -l (combined)" "$COMBINED"
row gzip_dc "gzip -dc (combined.gz)" "$COMBINED"
row goaccess "goaccess COMBINED" "$COMBINED"
row combined "rlctl analyze combined" "$COMBINED" "$(ratio combined wc 'wc -l'); $(speedup combined goaccess GoAccess)"
row json "rlctl analyze json" "$JSON"
row custom "rlctl analyze log_format" "$CUSTOM_LOG"
row gzip "rlctl analyze combined.gz" "$COMBINED" "$(ratio gzip gzip_dc 'gzip -dc')"
row simulate "rlctl simulate --algo all --limit" "$COMBINED"
row simulate_recommended "rlctl simulate --algo all" "$COMBINED"
echo
echo "input MB is the log text processed (decompressed for the gzip rows: $(size_mb "$GZ") MB on disk);"
echo "peak MB is the largest maximum RSS over the runs, B/event that divided by the lines."
