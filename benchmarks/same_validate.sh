#!/bin/bash
# Is `validate --format json` (the "kb" line aside) byte-identical between two source trees?
#
#   benchmarks/same_validate.sh BASE_SRC BRANCH_SRC KB... [BUNDLED]
#
# Each KB (a path, or the word BUNDLED for the bundled KB) is validated cold (INFERKB_NO_CACHE=1) with
# INFERKB_JOBS=1 and =2 by each tree; prints "same" or "DIFF" per KB and job count and exits 1 on any DIFF.
# PYTHON (default: python3) runs inferkb; OUT (default: a temporary folder) keeps the documents.
set -u
[ $# -ge 3 ] || { echo "usage: $0 BASE_SRC BRANCH_SRC KB... (KB may be BUNDLED)" >&2; exit 2; }
PY=${PYTHON:-python3}
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
      INFERKB_NO_CACHE=1 INFERKB_JOBS=$j PYTHONPATH=$src "$PY" -m inferkb validate "${arg[@]}" --format json | grep -v '^ *"kb"' > "$out/$n-j$j-$v.json"
    done
    if cmp -s "$out/$n-j$j-base.json" "$out/$n-j$j-branch.json"; then
      echo "same  $n INFERKB_JOBS=$j $(wc -c < "$out/$n-j$j-branch.json") bytes"
    else
      echo "DIFF  $n INFERKB_JOBS=$j ($out/$n-j$j-base.json vs -branch.json)"
      fail=1
    fi
  done
done
exit $fail
