#!/usr/bin/env bash
# Idempotent install of what Metron needs on Debian 12: apt packages listed in deploy/deps/*.apt
# (one file per component, '#' comments). Maven artifacts are fetched by Maven itself.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t want < <(cat deploy/deps/*.apt | sed 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "deps: ok (${#want[@]} packages)"
