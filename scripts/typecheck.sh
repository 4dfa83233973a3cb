#!/usr/bin/env bash
# mypy over the whole mjrig package (the widgets and the desktop wiring too), with its configuration in
# pyproject.toml ([tool.mypy]).
#
# Why a tree of links: the repository's folders are not laid out as the import package. setuptools maps
# them at install (pyproject.toml, [tool.setuptools.package-dir]: `app/` is `mjrig`, `widgets/` is
# `mjrig.widgets`, `models/` and `assets/` likewise), and mypy has no such mapping: it finds `mjrig.runtime`
# only in a folder `mjrig/runtime/`. So this script lays the package out as it installs, as symbolic links
# to the repository's files in a temporary folder (removed at exit), and puts that folder on MYPYPATH.
# mypy's cache goes in that folder too: its paths change with every run.
# Usage: bash scripts/typecheck.sh (exit status: mypy's).
set -euo pipefail
shopt -s nullglob
repo="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
trap 'exit 130' INT TERM HUP  # stopped: still through the EXIT trap
# The mapping read from pyproject.toml, parents before children: "mjrig app", "mjrig.widgets widgets"...
python3 - "$repo/pyproject.toml" >"$tree/package-dir" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    dirs = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
    print(package, folder)
PY
while read -r package folder; do
  target="$tree/${package//.//}"
  mkdir -p "$target"
  for item in "$repo/$folder"/*; do
    name="$(basename "$item")"
    if [ "$name" != "__pycache__" ] && [ ! -e "$target/$name" ]; then
      ln -s "$item" "$target/$name"
    fi
  done
done <"$tree/package-dir"
cd "$tree"  # run from the tree: the repository's own folders are not on mypy's search path
MYPYPATH="$tree" python3 -m mypy --config-file "$repo/pyproject.toml" --cache-dir "$tree/.mypy_cache" \
  -p mjrig
