#!/bin/bash
# Is `validate --format json` (or `check`, with CMD=check) byte-identical between two source trees (the "kb" line aside)?
#
#   benchmarks/same_validate.sh BASE_SRC BRANCH_SRC KB... [BUNDLED]
#
# Each KB (a path, or the word BUNDLED for the bundled KB) is validated cold (INFERKB_NO_CACHE=1) with
# INFERKB_JOBS=1 and =2 by each tree; prints "same" or "DIFF" per KB and job count and exits 1 on any DIFF.
# PYTHON (default: python3) runs inferkb; OUT (default: a temporary folder) keeps the documents; CMD (default:
# validate) is the command; WARM=1 runs each tree twice with its own fresh load cache and compares the second runs.
set -u
[ $# -ge 3 ] || { echo "usage: $0 BASE_SRC BRANCH_SRC KB... (KB may be BUNDLED)" >&2; exit 2; }
PY=${PYTHON:-python3}
CMD=${CMD:-validate}
BASE=$1
BR=$2
shift 2
out=${OUT:-$(mktemp -d)}
fail=0
for kb in "$@"; do
  n=$(basename "$kb")
  if [ "$kb" = BUNDLED ]; then arg=(); else arg=(--kb "$kb"); fi
  for j in 1 2; do
    for v in base branch; do
      if [ $v = base ]; then src=$BASE; else src=$BR; fi
      if [ "${WARM:-0}" = 1 ]; then
        cache="$out/cache-$n-j$j-$v"
        rm -rf "$cache"
        INFERKB_CACHE_DIR=$cache INFERKB_JOBS=$j PYTHONPATH=$src "$PY" -m inferkb "$CMD" "${arg[@]}" --format json > /dev/null
        INFERKB_CACHE_DIR=$cache INFERKB_JOBS=$j PYTHONPATH=$src "$PY" -m inferkb "$CMD" "${arg[@]}" --format json | grep -v '^ *"kb"' > "$out/$n-j$j-$v.json"
      else
        INFERKB_NO_CACHE=1 INFERKB_JOBS=$j PYTHONPATH=$src "$PY" -m inferkb "$CMD" "${arg[@]}" --format json | grep -v '^ *"kb"' > "$out/$n-j$j-$v.json"
      fi
    done
    if cmp -s "$out/$n-j$j-base.json" "$out/$n-j$j-branch.json"; then
      echo "same  $CMD $n INFERKB_JOBS=$j $(wc -c < "$out/$n-j$j-branch.json") bytes"
    else
      echo "DIFF  $CMD $n INFERKB_JOBS=$j ($out/$n-j$j-base.json vs -branch.json)"
      fail=1
    fi
  done
done
exit $fail
