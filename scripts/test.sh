#!/usr/bin/env bash
# Install mjrig with its test and docs extras (and, on Debian without a display, Xvfb + Mesa, and Chromium to
# render the HTML reports), check the format, lint and types (ruff, mypy), build the manual (mkdocs build
# --strict), then run the whole test suite,
# lane by lane: `unit`, `long` and `e2e` on every core (pytest-xdist; the Ray tests in one group, on one worker in
# turn: one Ray head at a time), then `gui` (the real app on screens of its own, also on every core: its apps
# draw their 3D view at 10 frames/s, `--view-fps`, so that two fit on two cores), each printing its 25 slowest
# tests.
# Usage: bash scripts/test.sh [pytest args] (with arguments: one pytest run with them, e.g.
# `bash scripts/test.sh -m unit -n 2`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DISPLAY:-}" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  if ! command -v Xvfb >/dev/null 2>&1 || ! command -v ffmpeg >/dev/null 2>&1 || ! command -v import >/dev/null 2>&1 \
     || ! command -v openbox >/dev/null 2>&1 || ! command -v xwininfo >/dev/null 2>&1 \
     || ! command -v chromium >/dev/null 2>&1 \
     || [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then
    # another package manager at work (an unattended upgrade, a neighbour's install): wait for it, 5 min at most
    for lock in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock; do
      if [ -e "$lock" ] && ! flock -n "$lock" true 2>/dev/null; then
        echo "waiting (5 min at most) for another package manager to let go of $lock ..."
        flock -w 300 "$lock" true || { echo "$lock is still held after 5 min: install the packages above yourself" >&2; exit 1; }
      fi
    done
    apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq xvfb libgl1-mesa-dri libegl1 libegl-mesa0 libosmesa6 \
      xdotool imagemagick ffmpeg openbox x11-utils fonts-wqy-microhei fonts-tlwg-garuda-ttf fontconfig chromium >/dev/null
  fi
fi
# Bytecode is cached, in a folder outside the tree, even where the environment says not to write it
# (PYTHONDONTWRITEBYTECODE): each CLI process an e2e test starts would otherwise compile mjrig's
# modules again (0.3 s of a 0.5 s start-up).
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$(mktemp -d -t mjrig-pycache-XXXXXX)}"
python3 -m pip install -q -e ".[test,docs]"
if [ $# -gt 0 ]; then
  exec python3 -m pytest -q "$@"
fi
# The house: one format (ruff format), the linter's rules (ruff check), types in the whole package
# (mypy; scripts/typecheck.sh), each configured in pyproject.toml.
if ! python3 -m ruff format --check --quiet . || ! python3 -m ruff check --quiet .; then
  echo "the code is not formatted or not lint-clean: run \`ruff format . && ruff check --fix .\`" >&2
  exit 1
fi
if ! bash scripts/typecheck.sh; then
  echo "mypy found type errors (above): scripts/typecheck.sh" >&2
  exit 1
fi
echo "house: ruff format, ruff check and mypy passed"
# The manual (docs/, mkdocs.yml) builds with every link and anchor resolved, into a folder outside the tree.
site="$(mktemp -d)"
if ! NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict --quiet -d "$site"; then
  rm -rf "$site"
  echo "the manual does not build: mkdocs build --strict failed (above)" >&2
  exit 1
fi
rm -rf "$site"
echo "manual: mkdocs build --strict passed"
workers="${MJRIG_TEST_WORKERS:-$(python3 -c 'import os; print(max(2, len(os.sched_getaffinity(0))))')}"
# One lane: pytest with ARGS, ended after LIMIT s (its whole process group; a lane takes 8-11 min
# here). Its output goes through a file, so a process a test left running holds no end of ours.
# A single test is ended after 15 min (pytest-timeout, `timeout` in pyproject.toml), with the
# stacks of its threads printed.
lane() {  # NAME LIMIT ARGS...
  local name=$1 limit=$2 log rc=0 start=$SECONDS
  shift 2
  log="$(mktemp)"
  timeout -k 60 "$limit" python3 -m pytest "$@" >"$log" 2>&1 &
  local pid=$!
  tail -n +1 -s 0.5 -f --pid="$pid" "$log"
  wait "$pid" || rc=$?
  rm -f "$log"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "the $name lane did not end within $limit s: stopped" >&2
  fi
  echo "$name lane: $((SECONDS - start)) s"
  return "$rc"
}
status=0
# Each lane collects its own folders only (collecting the others' modules cost each worker 3-4 s).
lane "unit + long + e2e" 1800 -q -p no:cacheprovider -n "$workers" --dist loadgroup -m "unit or long or e2e" --durations=25 tests/unit tests/long tests/e2e || status=$?
lane gui 2400 -q -p no:cacheprovider -n "$workers" -m gui --durations=25 tests/gui || status=$?
exit $status
