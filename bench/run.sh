#!/usr/bin/env bash
# Whole-process benchmark of rlctl against `wc -l`, `gzip -dc`, GoAccess and a
# DuckDB query on the same generated inputs, in one run. Prints the median wall
# time of several runs with its spread, throughput, peak memory and the ratios
# the performance targets are stated in. The README section "Performance" has
# the figures.
#
# Usage: bench/run.sh            (5,000,000 lines, 5 runs each)
#   LINES=1000000 RUNS=3 bench/run.sh
# Environment:
#   LINES          lines per generated input (default 5000000)
#   RUNS           runs per command (default 5); GOACCESS_RUNS for GoAccess (default 3)
#   GOACCESS_LINES lines GoAccess reads: the first N of the combined log
#                  (default 500000; GoAccess parses about 10^4 lines a second
#                  here, so the whole log would take many minutes a run). Its
#                  ratio compares throughput (MB/s), not time.
#   BENCH_DIR      where inputs are written and reused (default /tmp/rlctl-bench)
#   RLCTL          the binary to measure (default: cargo build --release, then use it)
#
# Release builds carry no debug info. To profile (perf record, flamegraphs) use
# the profiling profile, release code with line tables:
#   cargo build --profile profiling && perf record -g target/profiling/rlctl analyze ...
#   RLCTL=target/profiling/rlctl bench/run.sh   (to time that binary here)
#   SKIP_SIMULATE  set to 1 to leave out the simulate rows
#   SKIP_SHAPES    set to 1 to leave out the shape rows (distinct paths,
#                  many clients, shuffled and concatenated inputs)
#   RLCTL_VENV     the virtual environment with DuckDB (default
#                  ~/.cache/rlctl-venv, the one .ci/run creates)
#
# The shapes (all `rlctl generate --lines $LINES --seed 1`, combined):
#   paths-N        --distinct-paths LINES/5: a million distinct raw paths at 5M
#                  lines, against --distinct-paths 30 (the same lines otherwise)
#   scanners       --distinct-paths LINES/5 --scanners 2: the same with two
#                  scanners, whose probes bring thousands of first segments
#                  (the trie's root collapses; discovery on)
#   prefixed       the paths-N log with every path under /app (one first
#                  segment; discovery on)
#   clients-N      --clients LINES/5: a million client addresses at 5M lines
#   shuffled       --shuffle: each minute's lines in random order
#   at-end         --logged-at-end: each request written when it ends, stamped
#                  with when it began (Apache's %t): a little out of order
#   servers        --servers 10: ten time-sorted logs concatenated
#   rotated        the plain log cut into ten time-sorted parts (split -n l/10)
#                  concatenated out of order
#   copies         the shape the issue's DuckDB figure was taken on: a log of
#                  LINES/10 lines with --distinct-paths 30000 (about 30,000
#                  endpoints, cache-busted assets and ids), ten times over (not
#                  time-ordered); rlctl and DuckDB both run on it
#
# GoAccess is the Debian package `goaccess` (apt-get install goaccess); without
# it its row is skipped with a notice, and so is DuckDB's without the venv.
# Inputs are read once before measuring so that every command reads from the
# page cache. The two sides of each ratio the targets are stated in (the
# distinct-paths logs and DuckDB on the million-path log; the sorted log and
# its four reorderings; rlctl and DuckDB on the plain log and on the ten
# copies) are run in turn, one of each, RUNS times, so that the machine's
# speed drifting over the minutes of the run does not skew the ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
LINES=${LINES:-5000000}
RUNS=${RUNS:-5}
GOACCESS_RUNS=${GOACCESS_RUNS:-3}
GOACCESS_LINES=${GOACCESS_LINES:-500000}
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
DISTINCT=$((LINES / 5))
PATHS="$BENCH_DIR/paths-$DISTINCT-$LINES.log"
PATHS30="$BENCH_DIR/paths-30-$LINES.log"
CLIENTS="$BENCH_DIR/clients-$DISTINCT-$LINES.log"
SHUFFLED="$BENCH_DIR/shuffled-$LINES.log"
AT_END="$BENCH_DIR/at-end-$LINES.log"
SERVERS="$BENCH_DIR/servers-10-$LINES.log"
ROTATED="$BENCH_DIR/rotated-10-$LINES.log"
SCANNERS="$BENCH_DIR/scanners-2-paths-$DISTINCT-$LINES.log"
PREFIXED="$BENCH_DIR/prefixed-paths-$DISTINCT-$LINES.log"
COPIES="$BENCH_DIR/copies-10-paths-30000-$((LINES / 10)).log"
SHAPES=("$PATHS" "$PATHS30" "$CLIENTS" "$SHUFFLED" "$AT_END" "$SERVERS" "$ROTATED" "$SCANNERS" "$PREFIXED" "$COPIES")
[[ "${SKIP_SHAPES:-}" == 1 ]] && SHAPES=()

generate() { # FILE FORMAT [MORE FLAGS]
    [[ -s "$1" ]] && return
    echo "bench: generating $1" >&2
    "$RLCTL" generate --lines "$LINES" --seed 1 --format "$2" "${@:3}" -o "$1.part"
    mv "$1.part" "$1"
}
generate "$COMBINED" combined
generate "$JSON" json
generate "$CUSTOM_LOG" "$CUSTOM"
if [[ ! -s "$GZ" ]]; then
    echo "bench: compressing $GZ (gzip -6)" >&2
    gzip -6 -c "$COMBINED" > "$GZ.part" && mv "$GZ.part" "$GZ"
fi
if [[ ${#SHAPES[@]} -gt 0 ]]; then
    generate "$PATHS" combined --distinct-paths "$DISTINCT"
    generate "$PATHS30" combined --distinct-paths 30
    generate "$SCANNERS" combined --distinct-paths "$DISTINCT" --scanners 2
    if [[ ! -s "$PREFIXED" ]]; then
        echo "bench: putting every path of $PATHS under /app" >&2
        sed -E 's#"([A-Z]+) /#"\1 /app/#' "$PATHS" > "$PREFIXED.part" && mv "$PREFIXED.part" "$PREFIXED"
    fi
    generate "$CLIENTS" combined --clients "$DISTINCT"
    generate "$SHUFFLED" combined --shuffle
    generate "$AT_END" combined --logged-at-end
    generate "$SERVERS" combined --servers 10
    if [[ ! -s "$ROTATED" ]]; then
        echo "bench: cutting $COMBINED into ten parts, concatenated out of order" >&2
        parts=$(mktemp -d)
        split -n l/10 -d -a 1 "$COMBINED" "$parts/part."
        (cd "$parts" && cat part.3 part.7 part.0 part.9 part.5 part.1 part.8 part.2 part.6 part.4) > "$ROTATED.part"
        rm -rf "$parts"
        mv "$ROTATED.part" "$ROTATED"
    fi
    if [[ ! -s "$COPIES" ]]; then
        echo "bench: writing $COPIES" >&2
        "$RLCTL" generate --lines $((LINES / 10)) --seed 1 --distinct-paths 30000 -o "$COPIES.one"
        for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$COPIES.one"; done > "$COPIES.part"
        rm "$COPIES.one"
        mv "$COPIES.part" "$COPIES"
    fi
fi
GOACCESS_LOG="$BENCH_DIR/combined-$LINES-head-$GOACCESS_LINES.log"
if [[ "$GOACCESS_LINES" -ge "$LINES" ]]; then
    GOACCESS_LOG="$COMBINED"
elif [[ ! -s "$GOACCESS_LOG" ]]; then
    head -n "$GOACCESS_LINES" "$COMBINED" > "$GOACCESS_LOG.part" && mv "$GOACCESS_LOG.part" "$GOACCESS_LOG"
fi
cat "$COMBINED" "$JSON" "$CUSTOM_LOG" "$GZ" "$GOACCESS_LOG" "${SHAPES[@]}" > /dev/null # into the page cache

RLCTL_VENV=${RLCTL_VENV:-$HOME/.cache/rlctl-venv}
DUCKDB=""
if "$RLCTL_VENV/bin/python" -c 'import duckdb' 2> /dev/null; then
    DUCKDB="'$RLCTL_VENV/bin/python' bench/duckdb_window_quantiles.py"
else
    echo "bench: no DuckDB in $RLCTL_VENV (.ci/run creates it): its rows are skipped" >&2
fi
# Endpoint discovery is measured on and off where this rlctl has it.
DISCOVER=""
"$RLCTL" analyze --help | grep -q -- '--discover' && DISCOVER=1

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# measure NAME RUNS COMMAND: runs COMMAND (a bash string) RUNS times; leaves
# "median min max peak_rss_kb" in $TMP/NAME.
# run_once NAME COMMAND: runs COMMAND (a bash string) once, adding its wall
# time and peak RSS (KB) to $TMP/NAME.runs.
run_once() {
    local name=$1 cmd=$2
    local start=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$TMP/$name.one" bash -c "$cmd" > /dev/null 2>&1
    local end=$EPOCHREALTIME
    echo "$start $end $(cat "$TMP/$name.one")" | awk '{ printf "%.4f %s\n", $2 - $1, $3 }' >> "$TMP/$name.runs"
}

# summarize NAME: leaves "median min max peak_rss_kb" of $TMP/NAME.runs in $TMP/NAME.
summarize() {
    local name=$1
    sort -n "$TMP/$name.runs" | awk '
        { t[NR] = $1; if ($2 > rss) rss = $2 }
        END {
            median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
            print median, t[1], t[NR], rss
        }' > "$TMP/$name"
    echo "bench: $name done ($(cat "$TMP/$name"))" >&2
}

# measure NAME RUNS COMMAND: runs COMMAND RUNS times; leaves "median min max
# peak_rss_kb" in $TMP/NAME.
measure() {
    local name=$1 runs=$2 cmd=$3 i
    : > "$TMP/$name.runs"
    for ((i = 0; i < runs; i++)); do
        run_once "$name" "$cmd"
    done
    summarize "$name"
}

# measure_group RUNS NAME_1 COMMAND_1 NAME_2 COMMAND_2 ...: as measure for
# each, their runs taken in turn (one of each, RUNS times), so that a ratio
# among them is not skewed by the machine's speed drifting over the minutes
# between them.
measure_group() {
    local runs=$1 i j
    shift
    local -a group=("$@")
    for ((j = 0; j < ${#group[@]}; j += 2)); do
        : > "$TMP/${group[j]}.runs"
    done
    for ((i = 0; i < runs; i++)); do
        for ((j = 0; j < ${#group[@]}; j += 2)); do
            run_once "${group[j]}" "${group[j + 1]}"
        done
    done
    for ((j = 0; j < ${#group[@]}; j += 2)); do
        summarize "${group[j]}"
    done
}

size_mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }

measure wc "$RUNS" "wc -l '$COMBINED'"
measure gzip_dc "$RUNS" "gzip -dc '$GZ'"
if [[ "$GOACCESS_RUNS" == 0 ]]; then
    echo "bench: GOACCESS_RUNS=0: GoAccess skipped" >&2
elif command -v goaccess > /dev/null; then
    measure goaccess "$GOACCESS_RUNS" "goaccess '$GOACCESS_LOG' --log-format=COMBINED -o '$TMP/report.json'"
else
    echo "bench: goaccess not installed (apt-get install goaccess): its row is skipped" >&2
fi
# Each ratio's two sides are measured in one group, their runs in turn.
analyze() { echo "'$RLCTL' analyze -q --format json $*"; }
group=(combined "$(analyze "'$COMBINED'")")
[[ -n "$DUCKDB" ]] && group+=(duckdb "$DUCKDB '$COMBINED' 60")
measure_group "$RUNS" "${group[@]}"
if [[ ${#SHAPES[@]} -gt 0 ]]; then
    if [[ -n "$DISCOVER" ]]; then
        for d in on off; do
            group=("paths_$d" "$(analyze --discover $d "'$PATHS'")"
                "paths30_$d" "$(analyze --discover $d "'$PATHS30'")")
            [[ -n "$DUCKDB" && $d == on ]] && group+=(duckdb_paths "$DUCKDB '$PATHS' 60")
            measure_group "$RUNS" "${group[@]}"
        done
    else
        group=(paths_off "$(analyze "'$PATHS'")" paths30_off "$(analyze "'$PATHS30'")")
        [[ -n "$DUCKDB" ]] && group+=(duckdb_paths "$DUCKDB '$PATHS' 60")
        measure_group "$RUNS" "${group[@]}"
    fi
    measure scanners "$RUNS" "$(analyze "'$SCANNERS'")"
    measure prefixed "$RUNS" "$(analyze "'$PREFIXED'")"
    measure clients "$RUNS" "$(analyze "'$CLIENTS'")"
    measure_group "$RUNS" sorted "$(analyze "'$COMBINED'")" \
        shuffled "$(analyze "'$SHUFFLED'")" at_end "$(analyze "'$AT_END'")" \
        servers "$(analyze "'$SERVERS'")" rotated "$(analyze "'$ROTATED'")"
    group=(copies "$(analyze "'$COPIES'")")
    [[ -n "$DUCKDB" ]] && group+=(duckdb_copies "$DUCKDB '$COPIES' 60")
    measure_group "$RUNS" "${group[@]}"
fi
measure json "$RUNS" "'$RLCTL' analyze -q --format json '$JSON'"
measure custom "$RUNS" "'$RLCTL' analyze -q --format json --log-format '$CUSTOM' '$CUSTOM_LOG'"
measure gzip "$RUNS" "'$RLCTL' analyze -q --format json '$GZ'"
if [[ "${SKIP_SIMULATE:-}" != 1 ]]; then
    measure simulate "$RUNS" "'$RLCTL' simulate -q --algo all --limit 600/1m --format json '$COMBINED'"
    measure simulate_recommended "$RUNS" "'$RLCTL' simulate -q --algo all --format json '$COMBINED'"
    # Every gateway's replay reads each request's path as the product does.
    measure simulate_gateways "$RUNS" "'$RLCTL' simulate -q --gateway all --limit 600/1m --format json '$COMBINED'"
fi

echo
echo "rlctl $("$RLCTL" --version | awk '{print $2}') ($(git rev-parse --short HEAD 2>/dev/null || echo '?')), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$LINES lines per input; median of $RUNS runs (GoAccess: $GOACCESS_RUNS) with the fastest and slowest; MB = 10^6 bytes"
echo
printf '%-38s %9s %8s %15s %9s %9s %9s  %s\n' "command" "input MB" "median s" "spread s" "MB/s" "peak MB" "B/event" "ratio"
row() { # NAME LABEL FILE RATIO_TEXT
    local name=$1 label=$2 file=$3 ratio=${4:-}
    [[ -s "$TMP/$name" ]] || return 0
    read -r median min max rss < "$TMP/$name"
    local mb; mb=$(size_mb "$file")
    awk -v l="$label" -v mb="$mb" -v m="$median" -v lo="$min" -v hi="$max" -v rss="$rss" -v n="$LINES" -v r="$ratio" 'BEGIN {
        printf "%-38s %9.1f %8.3f %7.3f-%-7.3f %9.0f %9.0f %9.0f  %s\n",
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
        'BEGIN { if (a > 0) printf "%.2f x faster than %s", b / a, t }'
}
throughput() { # NAME_FAST FILE_FAST NAME_SLOW FILE_SLOW TEXT: "X times the throughput of"
    [[ -s "$TMP/$1" && -s "$TMP/$3" ]] || return 0
    awk -v a="$(cut -d' ' -f1 "$TMP/$1")" -v fa="$(stat -c %s "$2")" \
        -v b="$(cut -d' ' -f1 "$TMP/$3")" -v fb="$(stat -c %s "$4")" -v t="$5" \
        'BEGIN { if (a > 0 && fb > 0) printf "%.2f x the MB/s of %s", (fa / a) / (fb / b), t }'
}
memory() { # NAME_A NAME_B TEXT: "A's peak is X times B's"
    [[ -s "$TMP/$1" && -s "$TMP/$2" ]] || return 0
    awk -v a="$(cut -d' ' -f4 "$TMP/$1")" -v b="$(cut -d' ' -f4 "$TMP/$2")" -v t="$3" \
        'BEGIN { if (b > 0) printf "%.2f x the memory of %s", a / b, t }'
}
row wc "wc -l (combined)" "$COMBINED"
row gzip_dc "gzip -dc (combined.gz)" "$COMBINED"
row goaccess "goaccess COMBINED (first $GOACCESS_LINES)" "$GOACCESS_LOG"
row combined "rlctl analyze combined" "$COMBINED" "$(ratio combined wc 'wc -l'); $(throughput combined "$COMBINED" goaccess "$GOACCESS_LOG" GoAccess); $(speedup combined duckdb DuckDB)"
row duckdb "duckdb per-window quantiles" "$COMBINED"
row json "rlctl analyze json" "$JSON"
row custom "rlctl analyze log_format" "$CUSTOM_LOG"
row gzip "rlctl analyze combined.gz" "$COMBINED" "$(ratio gzip gzip_dc 'gzip -dc')"
row simulate "rlctl simulate --algo all --limit" "$COMBINED"
row simulate_recommended "rlctl simulate --algo all" "$COMBINED" "$(ratio simulate_recommended simulate 'one --limit')"
row simulate_gateways "rlctl simulate --gateway all --limit" "$COMBINED" "$(ratio simulate_gateways simulate '--algo all --limit')"
for d in off on; do
    row "paths30_$d" "analyze 30 paths (discover $d)" "$PATHS30"
    row "paths_$d" "analyze $DISTINCT paths (discover $d)" "$PATHS" "$(ratio "paths_$d" "paths30_$d" '30 paths'); $(memory "paths_$d" "paths30_$d" '30 paths'); $(speedup "paths_$d" duckdb_paths DuckDB)"
done
row duckdb_paths "duckdb, $DISTINCT paths" "$PATHS"
row scanners "analyze $DISTINCT paths + 2 scanners" "$SCANNERS" "$(ratio scanners paths30_on '30 paths'); $(ratio scanners paths_on 'no scanners')"
row prefixed "analyze $DISTINCT paths under /app" "$PREFIXED" "$(ratio prefixed paths30_on '30 paths'); $(ratio prefixed paths_on 'not prefixed')"
row clients "analyze $DISTINCT clients" "$CLIENTS" "$(ratio clients combined 'the 200-client log')"
row sorted "analyze sorted (the combined log)" "$COMBINED"
row shuffled "analyze shuffled in minutes" "$SHUFFLED" "$(ratio shuffled sorted sorted)"
row at_end "analyze logged at request end" "$AT_END" "$(ratio at_end sorted sorted)"
row servers "analyze 10 servers concatenated" "$SERVERS" "$(ratio servers sorted sorted)"
row rotated "analyze 10 parts out of order" "$ROTATED" "$(ratio rotated sorted sorted)"
row copies "analyze 30k paths, ten copies" "$COPIES" "$(speedup copies duckdb_copies DuckDB)"
row duckdb_copies "duckdb, 30k paths, ten copies" "$COPIES"
echo
echo "input MB is the log text processed (decompressed for the gzip rows: $(size_mb "$GZ") MB on disk);"
echo "peak MB is the largest maximum RSS over the runs, B/event that divided by the lines."
echo "The machine may be shared: compare ratios within one run, and read the load average above."
