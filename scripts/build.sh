#!/usr/bin/env bash
# Configures and builds the release preset (build/release). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/setup.sh"
cmake --preset release "$@" >/dev/null
cmake --build --preset release --parallel "$(nproc)"
