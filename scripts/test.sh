#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite (core, CLI, UI offscreen) twice
# over: a test that passes once and fails on a rerun is a failure (CI runs the core and CLI
# suites twice more, under the sanitizers). The tokenizer tests' npm packages are installed by a
# CTest fixture (tests/CMakeLists.txt), not by this script.
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/build.sh"
export QT_QPA_PLATFORM=offscreen
ctest --preset release --parallel "$(nproc)" --timeout 300 --repeat until-fail:2
