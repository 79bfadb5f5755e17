#!/usr/bin/env bash
# fuzz.sh [FUZZTIME]: runs every Go fuzz target of the module (func FuzzXxx in a _test.go file,
# found by grep, so a new one is never forgotten) for FUZZTIME each, one after the other.
# FUZZTIME is what `go test -fuzztime` takes: a count of inputs ("20000x", the default, what CI
# uses) or a duration ("30s"). A count is bounded by work, not by the clock: with a duration, Go's
# fuzzer can fail with "context deadline exceeded" on a loaded machine without any finding.
# A finding fails the run; Go writes the input under the package's testdata/fuzz/, where it
# becomes a regression case of the plain `go test` once committed with its fix.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-20000x}
inputs() { find "$1" -type f 2>/dev/null | wc -l || true; }
count=0
start=$SECONDS
while IFS=: read -r file _ line; do
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
	pkg=./$(dirname "$file")
	corpus=$pkg/testdata/fuzz/$name
	before=$(inputs "$corpus")
	echo "== fuzz $name ($pkg, $fuzztime)"
	if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" 2>&1 | grep -v '^fuzz: elapsed'; then
		if (($(inputs "$corpus") > before)); then
			echo "fuzz: $name found a failing input (above); it is saved under $corpus"
		else
			echo "fuzz: $name failed without saving an input (above)"
		fi
		exit 1
	fi
	count=$((count + 1))
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' framework nodeimpl hostfeature cmd suites | sort)
echo "fuzz: $count targets, $fuzztime each, no finding ($((SECONDS - start)) s)"
