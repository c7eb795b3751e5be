#!/usr/bin/env bash
# screenshot-html.sh: photographs an HTML report in headless Chromium at a
# desktop and a phone width, for the manual layout check of `--format html`.
#
# Usage: scripts/screenshot-html.sh REPORT.html [OUT_PREFIX]
#   Writes OUT_PREFIX-wide.png (1280 px wide) and OUT_PREFIX-narrow.png (480 px
#   wide); OUT_PREFIX defaults to REPORT without its .html. HEIGHT (default 2000)
#   sets the window height: raise it to see a long report whole.
#   Needs Debian's chromium (`apt-get install -y chromium`); exits 3 without it.
#
# The manual check, after a change to src/output/html.rs or chart.rs:
#   1. Render a report with charts, e.g. `RLCTL_SCREENSHOT_DIR=/tmp/shots cargo
#      test --test cli html_screenshot` (keeps report.html and both PNGs there),
#      or run this script on any report.
#   2. Open both PNGs and look: the title, the contents list, warnings (amber
#      box), facts and tables are aligned; chart text is legible, axes carry
#      sensible ticks (HH:MM on time axes, 1/10/100 on log axes), limit and
#      percentile markers are labelled, the legend names every line.
#   3. In the narrow PNG nothing is cut at the right edge: the page never needs
#      sideways scrolling (wide tables and charts scroll inside their own box).
#
# Chromium runs with networking features off and a throwaway profile; the
# report itself loads nothing (its Content-Security-Policy forbids it).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 REPORT.html [OUT_PREFIX]" >&2
    exit 2
fi
report=$(realpath "$1")
prefix=${2:-${1%.html}}
height=${HEIGHT:-2000}

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
    echo "chromium is not installed (apt-get install -y chromium)" >&2
    exit 3
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

shoot() {
    local width=$1 out=$2
    rm -f "$out"
    if ! timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --hide-scrollbars --user-data-dir="$profile" \
        --window-size="$width,$height" --screenshot="$out" "file://$report" \
        >"$profile/chromium.log" 2>&1 || [[ ! -s "$out" ]]; then
        cat "$profile/chromium.log" >&2
        echo "chromium did not write $out" >&2
        exit 1
    fi
    echo "$out"
}

shoot 1280 "$prefix-wide.png"
shoot 480 "$prefix-narrow.png"
