#!/usr/bin/env bash
# Installs the Debian 12 packages AttnLab builds with. Idempotent: when everything is
# already installed it only asks dpkg and returns in well under a second.
set -euo pipefail

PACKAGES=(
    build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-svg-dev libgl1-mesa-dev
    qt6-tools-dev qt6-l10n-tools  # LinguistTools: lrelease compiles resources/translations
    fonts-noto-cjk qt6-translations-l10n  # Chinese glyphs, not boxes; Qt's own dialogs in zh_CN
    libqcustomplot-dev libeigen3-dev nlohmann-json3-dev libzip-dev libpcre2-dev libicu-dev
    libgtest-dev
    libcurl4-openssl-dev libssl-dev  # downloads from the Hugging Face Hub (TLS, sha256)
    libsentencepiece-dev  # SentencePiece .model tokenizers (Marian's source.spm) read by the reference library
    xvfb xauth
    poppler-utils  # pdftotext: the render tests read the text back out of PDF figures
)

missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
    exit 0
fi

echo "attnlab setup: installing ${missing[*]}" >&2
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
