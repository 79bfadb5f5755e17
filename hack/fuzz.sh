#!/usr/bin/env bash
# fuzz.sh [FUZZTIME]: runs every Go fuzz target of the module (func FuzzXxx in a _test.go file,
# found by grep, so a new one is never forgotten) for FUZZTIME each (default 10s), one after the
# other. A finding fails the run; Go writes the input under the package's testdata/fuzz/, where
# it becomes a regression case of the plain `go test` once committed with its fix.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
count=0
start=$SECONDS
while IFS=: read -r file _ line; do
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
	pkg=./$(dirname "$file")
	echo "== fuzz $name ($pkg, $fuzztime)"
	go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" 2>&1 | grep -v '^fuzz: elapsed' || {
		echo "fuzz: $name found a failing input (above); it is saved under $pkg/testdata/fuzz/$name"
		exit 1
	}
	count=$((count + 1))
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' framework nodeimpl hostfeature cmd suites | sort)
echo "fuzz: $count targets, $fuzztime each, no finding ($((SECONDS - start)) s)"
