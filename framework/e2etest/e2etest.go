// Package e2etest marks volperm's end-to-end tests: those that run the volperm binary or a
// target on a whole catalogue, kill and interrupt runs, or start containers by the dozen. They
// are not unit tests (issue 34): `make test` skips them, and `make e2e` (CI's stage "end-to-end
// tests", beside the kind lanes) runs them, by the names the Makefile's E2E_TESTS lists
// (TestListed keeps it equal to the tests that call Gate).
package e2etest

import (
	"os"
	"testing"
)

// Env is the variable that runs the end-to-end tests: VOLPERM_E2E=1.
const Env = "VOLPERM_E2E"

// Gate skips the test unless Env is 1; call it first in an end-to-end test.
func Gate(t testing.TB) {
	t.Helper()
	if os.Getenv(Env) != "1" {
		t.Skip("an end-to-end test, not a unit test: `make e2e` runs it (" + Env + "=1), as CI does")
	}
}
