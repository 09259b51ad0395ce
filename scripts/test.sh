#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite (core, CLI, UI offscreen).
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/build.sh"
export QT_QPA_PLATFORM=offscreen
ctest --preset release --parallel "$(nproc)" --timeout 300
