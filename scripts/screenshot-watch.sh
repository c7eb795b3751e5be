#!/usr/bin/env bash
# screenshot-watch.sh: a PNG of `rlctl watch`'s live terminal view, for the
# README. A generator appends a live access log (wall-clock timestamps, a few
# runaway clients among many quiet ones, one rotation by rename-and-create);
# `rlctl watch` follows it in a detached tmux session of COLS x ROWS; after
# WAIT seconds the pane is captured with its escapes (`tmux capture-pane -e`),
# turned into an HTML page (a dark terminal, SGR colours kept) and
# photographed by headless Chromium with the flags of screenshot-html.sh.
#
# Usage: scripts/screenshot-watch.sh [OUT.png]     (default docs/watch-view.png)
# Environment: RLCTL (default: cargo build --release, then use it), COLS (200),
#   ROWS (20), WAIT (18). Needs tmux and chromium; exits 3 without them.
set -euo pipefail

out=$(realpath -m "${1:-docs/watch-view.png}")
cols=${COLS:-200}
rows=${ROWS:-20}
wait_s=${WAIT:-18}
cd "$(dirname "$0")/.."
for tool in tmux chromium; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 3; }
done
if [[ -z "${RLCTL:-}" ]]; then
    cargo build --release --quiet --bin rlctl
    RLCTL="${CARGO_TARGET_DIR:-target}/release/rlctl"
fi
RLCTL=$(realpath "$RLCTL")

work=$(mktemp -d)
session="rlctl-shot"
# A private tmux server in the foreground (-D): no daemon(), which fails where
# /dev/null is not a device (some containers), and nothing shared with the
# user's own tmux.
socket="$work/tmux.sock"
tmux -D -S "$socket" </dev/null >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do [[ -S "$socket" ]] && break; sleep 0.1; done
cleanup() {
    tmux -S "$socket" kill-server 2>/dev/null || true
    kill "$server" 2>/dev/null || true
    [[ -n "${gen:-}" ]] && kill "$gen" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/policy.toml" <<'EOF'
[[rule]]
name = "per-client"
limit = "120/1m"
burst = 20
algorithm = "token-bucket"

[[rule]]
name = "search"
method = "GET"
route = "^/api/search"
limit = "2r/s"
burst = 5
algorithm = "leaky-bucket"

[[rule]]
name = "login"
method = "POST"
route = "^/login$"
limit = "5/1m"
algorithm = "sliding-log"

[[rule]]
name = "health"
route = "^/healthz$"
exempt = true
EOF
log="$work/access.log"
: >"$log"

# About 300 lines/s: 200 quiet clients; two runaway loops on the search API,
# each for a few seconds (198.51.100.7 from 3 s to 8 s, 198.51.100.23 from 9 s
# to 13 s); a batch job searching all the time (192.0.2.44); a scanner
# probing paths that answer 404 (192.0.2.66); a credential stuffer.
python3 - "$log" "$wait_s" <<'EOF' &
import os, random, sys, time
log, wait_s = sys.argv[1], float(sys.argv[2])
rng = random.Random(3)
quiet = [f"203.0.113.{i}" for i in range(1, 201)]
episodes = [("198.51.100.7", 3, 8), ("198.51.100.23", 9, 13)]
batch, scanner, stuffer = "192.0.2.44", "192.0.2.66", "192.0.2.201"
probes = [f"/{a}{b}.php" for a in "abcdefgh" for b in "xyzw"]
paths = ["/", "/api/items", "/api/search?q=shoes", "/static/app.js", "/healthz", "/api/items/42"]
out = open(log, "a")
start = time.time()
rotated = False
while time.time() - start < wait_s + 5:
    now = time.time()
    elapsed = now - start
    if not rotated and elapsed > wait_s / 2:
        out.close(); os.replace(log, log + ".1"); out = open(log, "a"); rotated = True
    lines = []
    def add(who, method, path, status=200):
        lines.append(f'{now:.3f} {who} "{method} {path} HTTP/1.1" {status}\n')
    for who, begin, end in episodes:
        if begin <= elapsed < end:
            for _ in range(3):
                add(who, "GET", "/api/search?q=x")
    for _ in range(2):
        add(batch, "GET", "/api/search?q=sync")
    add(scanner, "GET", rng.choice(probes), 404)
    if rng.random() < 0.5:
        add(stuffer, "POST", "/login")
    for _ in range(22):
        add(rng.choice(quiet), "GET", rng.choice(paths))
    out.write("".join(lines)); out.flush()
    time.sleep(0.1)
EOF
gen=$!

tmux -S "$socket" new-session -d -s "$session" -x "$cols" -y "$rows" \
    "$RLCTL watch '$log' --policy '$work/policy.toml' --log-format '\$msec \$remote_addr \"\$request\" \$status' --format view --max-delay 1s --no-listen"
sleep "$wait_s"
tmux -S "$socket" capture-pane -e -p -t "$session" >"$work/pane.txt"

python3 - "$work/pane.txt" "$work/pane.html" <<'EOF'
import html, re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
colours = ["#2e3436", "#ef2929", "#8ae234", "#fce94f", "#729fcf", "#ad7fa8", "#34e2e2", "#eeeeec"]
out, style = [], {}
def span(chunk):
    if not chunk:
        return ""
    css = ";".join(f"{k}:{v}" for k, v in style.items())
    return f'<span style="{css}">{html.escape(chunk)}</span>' if css else html.escape(chunk)
pos = 0
for m in re.finditer(r"\x1b\[([0-9;]*)m", text):
    out.append(span(text[pos:m.start()]))
    pos = m.end()
    for code in (m.group(1) or "0").split(";"):
        n = int(code or 0)
        if n == 0: style = {}
        elif n == 1: style["font-weight"] = "bold"
        elif 30 <= n <= 37: style["color"] = colours[n - 30]
        elif 90 <= n <= 97: style["color"] = colours[n - 90]
        elif 40 <= n <= 47: style["background"] = colours[n - 40]
        elif n == 39: style.pop("color", None)
        elif n == 49: style.pop("background", None)
out.append(span(text[pos:]))
page = f"""<!doctype html><meta charset="utf-8"><style>
body {{ margin: 0; background: #1e1e1e; }}
pre {{ margin: 0; padding: 14px 18px; color: #e6e6e6; background: #1e1e1e;
       font: 13px/1.35 'DejaVu Sans Mono', monospace; }}
</style><pre>{''.join(out).rstrip()}</pre>"""
open(sys.argv[2], "w", encoding="utf-8").write(page)
EOF

profile="$work/profile"
mkdir -p "$profile"
width=$((cols * 8 + 36))
height=$((rows * 18 + 28))
rm -f "$out"
if ! timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update \
    --disable-sync --hide-scrollbars --user-data-dir="$profile" \
    --window-size="$width,$height" --screenshot="$out" "file://$work/pane.html" \
    >"$profile/chromium.log" 2>&1 || [[ ! -s "$out" ]]; then
    cat "$profile/chromium.log" >&2
    echo "chromium did not write $out" >&2
    exit 1
fi
echo "$out"
