#!/usr/bin/env bash
# Runs one fuzz target for a while, seeded, on the stable toolchain:
#
#   bash fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags...]
#   bash fuzz/run.sh pipeline 600
#
# cargo-fuzz needs nightly flags (-Z sanitizer, coverage options);
# RUSTC_BOOTSTRAP=1 lets the stable compiler accept them. Builds go to
# fuzz/target (not the shared CARGO_TARGET_DIR). Crashes land in
# fuzz/artifacts/TARGET/; reproduce one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET fuzz/artifacts/TARGET/crash-...
set -euo pipefail

target=${1:?usage: fuzz/run.sh TARGET [SECONDS] [libFuzzer flags...]}
seconds=${2:-600}
shift $(( $# < 2 ? $# : 2 ))

fuzz=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$fuzz"
unset CARGO_TARGET_DIR
export RUSTC_BOOTSTRAP=1
# Resolve dependencies as the main build does (the fuzz lock file is not committed).
[[ -f Cargo.lock ]] || cp ../Cargo.lock Cargo.lock
bash seed.sh >/dev/null
# The pipeline target starts threads; LeakSanitizer reports glibc's 32-byte
# thread-exit record (__cxa_thread_atexit_impl) as a leak, so leaks are not
# checked there.
leaks=()
[[ "$target" == pipeline ]] && leaks=(-detect_leaks=0)
# One process, one job (the machine is shared); -timeout flags hangs over 10 s.
exec cargo fuzz run "$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -print_final_stats=1 "${leaks[@]}" "$@"
