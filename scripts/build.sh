#!/usr/bin/env bash
# Configures and builds vkattn in ./build (Release with debug info, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DVKATTN_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
