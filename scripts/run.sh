#!/usr/bin/env bash
# Installs what is missing, builds, and opens AttnLab on a bundled example session.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/build.sh"
example="resources/examples/cat_full_vs_causal.json"
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    echo "attnlab: no display found; opening the window on a virtual display (xvfb-run)." >&2
    echo "attnlab: for figures without a window, see 'attnlab render --help'." >&2
    exec xvfb-run -a -s "-screen 0 1600x1000x24" build/release/app/attnlab "$example" "$@"
fi
exec build/release/app/attnlab "$example" "$@"
