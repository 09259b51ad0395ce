#!/usr/bin/env bash
# Builds every libFuzzer harness in tests/fuzz (clang, ASan + UBSan, build/fuzz) and runs each
# for SECONDS (default 30) from its seed corpus, one per core at a time (ATTNLAB_FUZZ_JOBS: how
# many at once). Starts no new one after a crash, leak, timeout or out-of-memory: the input is
# saved as build/fuzz/crashes/<harness>-* and the script exits 1. Prints each harness's exec
# count, in the order they were named.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]      e.g. scripts/fuzz.sh 600 npy session
# Environment: ATTNLAB_FUZZ_BUILD (build folder, default build/fuzz); ATTNLAB_FUZZ_SEED (libFuzzer's
# -seed: 0, the default, a new one each run; CI gives a fixed one, so its smoke run tries the
# same inputs every time and a failure there comes back with the same seed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
shift || true
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, got '$seconds'" >&2; exit 2; }
[[ "${ATTNLAB_FUZZ_SEED:-0}" =~ ^[0-9]+$ ]] ||
    { echo "fuzz.sh: ATTNLAB_FUZZ_SEED must be a whole number, got '$ATTNLAB_FUZZ_SEED'" >&2; exit 2; }

"./scripts/setup.sh"
# clang and its runtimes, when missing (as scripts/setup.sh installs the build's packages).
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/fuzz-packages.txt)
missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if ((${#missing[@]} > 0)); then
    echo "fuzz.sh: installing ${missing[*]}" >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build="${ATTNLAB_FUZZ_BUILD:-build/fuzz}"
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
    mapfile -t harnesses < <(ls tests/fuzz/corpus)
fi
# -O1 with assertions on (Eigen's bounds checks included); warnings are not errors here, as
# clang warns about things GCC (the project's compiler) does not. A folder configured already
# is built as it is (CI's sanitized build, which holds the tests too, comes configured).
if [[ ! -f "$build/CMakeCache.txt" ]]; then
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS=-O1 -DATTNLAB_FUZZ=ON -DATTNLAB_BUILD_UI=OFF -DATTNLAB_BUILD_TESTS=OFF \
        -DATTNLAB_WERROR=OFF "${launcher[@]}" >/dev/null
elif ! grep -q '^ATTNLAB_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
    echo "fuzz.sh: $build is configured without ATTNLAB_FUZZ=ON" >&2
    exit 2
fi
targets=()
for name in "${harnesses[@]}"; do targets+=("attnlab_fuzz_$name"); done
cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

mkdir -p "$build/crashes"
# One harness per core at a time: each is single-threaded, so CI's smoke run takes half the
# wall time on two cores. A failure stops new harnesses from starting; the ones running finish.
jobs_max="${ATTNLAB_FUZZ_JOBS:-$(nproc)}"
[[ "$jobs_max" =~ ^[1-9][0-9]*$ ]] ||
    { echo "fuzz.sh: ATTNLAB_FUZZ_JOBS must be a whole number above 0, got '$jobs_max'" >&2; exit 2; }
run_one() {
    local name="$1"
    local work="$build/corpus/$name" # new inputs go here; the committed seeds stay as they are
    mkdir -p "$work"
    local log="$build/$name.log" rc=0
    # -rss_limit_mb: a file of a few KB must not need GBs; -timeout: nor seconds per input.
    ASAN_OPTIONS="detect_leaks=1" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        "$build/tests/fuzz/attnlab_fuzz_$name" "$work" "tests/fuzz/corpus/$name" \
        -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -seed="${ATTNLAB_FUZZ_SEED:-0}" \
        -print_final_stats=1 -artifact_prefix="$build/crashes/$name-" >"$log" 2>&1 || rc=$?
    echo "$rc" >"$build/$name.status"
}
for name in "${harnesses[@]}"; do rm -f "$build/$name.status"; done
for name in "${harnesses[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
    failed=0
    for done_name in "${harnesses[@]}"; do
        [[ -f "$build/$done_name.status" && "$(cat "$build/$done_name.status")" != 0 ]] && failed=1
    done
    ((failed)) && break
    run_one "$name" &
done
wait
status=0
for name in "${harnesses[@]}"; do
    [[ -f "$build/$name.status" ]] || continue
    rc=$(cat "$build/$name.status")
    log="$build/$name.log"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    printf 'fuzz %-16s %10s execs in %ss\n' "$name" "${execs:-?}" "$seconds"
    if ((rc != 0)); then
        echo "fuzz.sh: $name failed (exit $rc); log $log, input:" >&2
        grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)" "$log" | head -20 >&2
        status=1
    fi
done
exit "$status"
