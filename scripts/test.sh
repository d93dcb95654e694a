#!/usr/bin/env bash
# Run the test suite (extra arguments go to pytest).
source "$(dirname "$0")/_venv.sh" test "[test]"
cd "$repo"
exec "$venv/bin/python" -m pytest "$@"
