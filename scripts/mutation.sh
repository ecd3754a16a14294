#!/usr/bin/env bash
# Mutation testing of reference/ with mutmut, the Gherkin conformance suite as the test command.
#
#   scripts/mutation.sh                  quick: the decision cores (allowance gate, scope
#                                        classifier, lease fence, permission narrowing)
#   scripts/mutation.sh --full           every module of reference/ (about 2,200 mutants)
#   scripts/mutation.sh --jobs 4         mutants tested at once (default 2)
#   scripts/mutation.sh --keep DIR       keep mutmut's working copy in DIR (to browse it later)
#
# mutmut 3 writes its mutated copy of the tree to ./mutants/, which is the name of the kit's
# own package of hand-written mutants, so this runs in a throwaway copy of the working tree
# (in /dev/shm when there is one) without that package; the suite needs it only for
# `--impl mutant:`. The test command is `pytest steps/test_features.py` against the in-process
# reference: every scenario, and nothing else (the unit tests do not count here).
#
# Results go to results/mutation-<mode>/: stats.json (mutmut's counts plus the score),
# survivors.txt (one mutant per line) and survivors.diff (what each survivor changed).
# The score is the share of mutants the suite detected (killed, timed out or crashed) among
# those it could test. Exit status: mutmut's; surviving mutants alone do not fail the script.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODE=quick
JOBS=2
KEEP=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --full) MODE=full ;;
        --jobs) JOBS="$2"; shift ;;
        --keep) KEEP="$2"; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

MUTMUT="$ROOT/.venv/bin/mutmut"
[[ -x "$MUTMUT" ]] || MUTMUT="$(command -v mutmut || true)"
if [[ -z "$MUTMUT" ]]; then
    echo "mutmut is not installed: .venv/bin/pip install mutmut" >&2
    exit 2
fi

if [[ -n "$KEEP" ]]; then
    WORK="$KEEP"
    mkdir -p "$WORK"
else
    BASE="${TMPDIR:-/tmp}"
    [[ -d /dev/shm && -w /dev/shm ]] && BASE=/dev/shm
    WORK="$(mktemp -d "$BASE/conformance-mutation.XXXXXX")"
    trap 'rm -rf "$WORK"' EXIT
fi

echo "copying the working tree to $WORK"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) \
    | tar -xf - -C "$WORK"
rm -rf "$WORK/mutants"

{
    echo "[mutmut]"
    echo "source_paths = reference/"
    if [[ "$MODE" == quick ]]; then
        echo "only_mutate ="
        echo "    reference/office/gate.py"
        echo "    reference/office/classifier.py"
        echo "    reference/workreq/lease.py"
        echo "    reference/workreq/permissions.py"
    fi
    echo "also_copy ="
    echo "    conformance/"
    echo "    steps/"
    echo "    features/"
    echo "    conftest.py"
    echo "pytest_add_cli_args ="
    echo "    -p"
    echo "    no:cov"
    echo "    --assert=plain"
    echo "pytest_add_cli_args_test_selection ="
    echo "    steps/test_features.py"
} > "$WORK/setup.cfg"

OUT="$ROOT/results/mutation-$MODE"
mkdir -p "$OUT"
echo "mutmut run ($MODE mode, $JOBS at a time); log: $OUT/mutmut.log"
started=$SECONDS
status=0
(cd "$WORK" && "$MUTMUT" run --max-children "$JOBS") > "$OUT/mutmut.log" 2>&1 || status=$?
elapsed=$((SECONDS - started))

cd "$WORK"
"$MUTMUT" export-cicd-stats > /dev/null
"$MUTMUT" results | sed -n 's/^ *\(.*\): survived$/\1/p' > "$OUT/survivors.txt"
: > "$OUT/survivors.diff"
while read -r name; do
    { echo "## $name"; "$MUTMUT" show "$name"; echo; } >> "$OUT/survivors.diff"
done < "$OUT/survivors.txt"

python3 - "$WORK/mutants/mutmut-cicd-stats.json" "$OUT/stats.json" "$MODE" "$elapsed" <<'EOF'
import json
import sys

source, target, mode, elapsed = sys.argv[1:]
stats = json.load(open(source))
testable = stats["total"] - stats["skipped"] - stats["no_tests"]
detected = testable - stats["survived"]
stats.update(mode=mode, wall_seconds=int(elapsed), score=round(detected / testable, 4) if testable else None)
json.dump(stats, open(target, "w"), indent=2)
print(
    f"{mode}: {stats['total']} mutants, {stats['killed']} killed, {stats['survived']} survived, "
    f"{stats['timeout']} timed out, {stats['no_tests']} untested; "
    f"score {detected}/{testable} = {stats['score']:.1%} in {elapsed} s"
)
EOF
echo "survivors: $OUT/survivors.txt (diffs in $OUT/survivors.diff)"
exit "$status"
