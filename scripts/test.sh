#!/usr/bin/env bash
# Install mjrig with its test extras (and, on Debian without a display, Xvfb + Mesa, and Chromium to
# render the HTML reports), then run
# the whole test suite. Usage: bash scripts/test.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DISPLAY:-}" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  if ! command -v Xvfb >/dev/null 2>&1 || ! command -v ffmpeg >/dev/null 2>&1 || ! command -v import >/dev/null 2>&1 \
     || ! command -v openbox >/dev/null 2>&1 || ! command -v xwininfo >/dev/null 2>&1 \
     || ! command -v chromium >/dev/null 2>&1 \
     || [ ! -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb libgl1-mesa-dri libegl1 libegl-mesa0 libosmesa6 \
      xdotool imagemagick ffmpeg openbox x11-utils fonts-wqy-microhei fontconfig chromium >/dev/null
  fi
fi
python3 -m pip install -q -e ".[test]"
# dm_control's suite models for the foreign-model tests, without its `mujoco` pin (see pyproject.toml)
python3 -m pip install -q --no-deps "dm_control>=1.0.20"
# gymnasium's MuJoCo models (walker2d) for the arrows test: its model files only, without its dependencies
python3 -m pip install -q --no-deps "gymnasium>=1.0"
exec python3 -m pytest -q "$@"
