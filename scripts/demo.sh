#!/usr/bin/env bash
# Quick start 1: install what is missing, build, run the attnbench demo on the
# default device (lavapipe on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/tools/attnbench/attnbench "$@"
