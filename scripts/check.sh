#!/usr/bin/env bash
# The main job: validate the bundled KB and run every audit (extra arguments go to `inferkb check`).
source "$(dirname "$0")/_venv.sh" runtime ""
exec "$venv/bin/inferkb" check "$@"
