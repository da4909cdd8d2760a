#!/usr/bin/env bash
# Installs what ringlab needs to build, run and test, from Debian's packages only.
# Runs apt-get only when something is missing, so it is cheap to call again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev nlohmann-json3-dev libfmt-dev doctest-dev
  libgloo-dev libopenmpi-dev openmpi-bin
  slurm-wlm munge iproute2 util-linux
  libglfw3-dev libxrandr-dev libimgui-dev python3-glad libstb-dev libfreetype-dev fonts-dejavu-core
  xvfb xauth libgl1-mesa-dri xdotool x11-apps x11-xserver-utils
  python3-torch
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
