#!/usr/bin/env bash
# pyvenv.sh NAME REQUIREMENTS-FILE: prints the python of a virtualenv holding exactly what the file lists,
# creating or refreshing it under ${METRON_CACHE:-~/.cache/metron}/venv-NAME when the file changed (so a test can
# run "$(scripts/pyvenv.sh fuzz deploy/deps/fuzz.requirements.txt)" every time; pip prints only to stderr).
set -euo pipefail
name="$1"
req="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
dir="${METRON_CACHE:-$HOME/.cache/metron}/venv-$name"
stamp="$dir/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ ! -x "$dir/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "pyvenv: installing $req into $dir" >&2
  rm -rf "$dir"
  /usr/bin/python3 -m venv "$dir" >&2
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  echo "$want" > "$stamp"
fi
echo "$dir/bin/python"
