# Sourced by scripts/check.sh and scripts/test.sh: create (once) and use .venv beside the repo.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "creating virtual environment in $venv" >&2
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
fi
stamp="$venv/.installed-$1"
if [ ! -f "$stamp" ] || [ "$repo/pyproject.toml" -nt "$stamp" ]; then
  echo "installing inferkb ($1) into $venv" >&2
  "$venv/bin/python" -m pip install --quiet -e "$repo$2"
  touch "$stamp"
fi
