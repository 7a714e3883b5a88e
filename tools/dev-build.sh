#!/usr/bin/env bash
# Incremental development build of the extension into build/dev-<name> (default: main).
# Run from the repository root: tools/dev-build.sh [name]; use the build with:  PYTHONPATH=python PYLUCID_EXT_DIR=build/dev-main python -m pytest
set -euo pipefail
cd "$(dirname "$0")/.."
dir="build/dev-${1:-main}"
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -Dpybind11_DIR="$(python -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
    -DPython_EXECUTABLE="$(command -v python)" "$@" >/dev/null
fi
# Two jobs by default: the machine this runs on is often shared (LUCID_BUILD_JOBS overrides).
ninja -C "$dir" -j "${LUCID_BUILD_JOBS:-2}" _C
