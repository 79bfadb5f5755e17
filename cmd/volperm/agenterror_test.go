package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/hostfeature"
)

// agentErrorCase is a case whose probe needs its volume set up.
const agentErrorCase = `apiVersion: volperm.dev/v1
kind: Case
name: emptyDir on the default medium, listed by uid 1003
area: emptydir
profile: conformance
pod:
  spec:
    volumes:
    - name: data
      emptyDir: {}
probes:
- {name: uid 1003 lists the volume, volume: data, as: {uid: 1003, gid: 1003}, op: list, path: .}
`

// agentErrorText is what the agent answers for the volume: a bug of its own, as a Python agent's
// "%" formatting once answered (issue 51).
const agentErrorText = `agent error: unsupported format character 'y' (0x79) at index 3`

// TestAgentErrorInFailure: a case whose agent answered a volume's set-up with an error shows the
// agent's own text in the terminal's failure line and in summary.md, not only `volume "data" was
// not set up` (issue 51: "An agent's error text is printed with the case's failure").
func TestAgentErrorInFailure(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	// A protocol v1 agent in shell (docs/exec-protocol.md): it fails every volume with its error.
	script := `#!/bin/sh
case "$1" in
setup) cat >/dev/null; cat <<'JSON'
{"protocolVersion":"volperm.dev/exec/v1","volumes":[{"name":"data","ok":false,"error":"` + agentErrorText + `"}]}
JSON
;;
teardown) cat >/dev/null; echo '{"protocolVersion":"volperm.dev/exec/v1","ok":true}' ;;
*) echo "unknown operation $1" >&2; exit 2 ;;
esac
`
	file := filepath.Join(dir, "case.yaml")
	for p, s := range map[string]string{agent: script, file: agentErrorCase} {
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := newRunDirs(t, 0)
	cmd := exec.Command(binary(t), "run", "--target", "exec:"+agent, "-f", file, "--report-dir", d.reports, "--work-dir", d.work)
	cmd.Env = d.env()
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != exitFailed {
		t.Fatalf("exit %d, want %d (the case fails):\n%s", code, exitFailed, tail(string(out)))
	}
	// The terminal: Ginkgo's failure line and its summary of failures.
	want := `volume "data" was not set up: its set-up failed with "` + agentErrorText + `"`
	if !strings.Contains(string(out), want) {
		t.Errorf("the terminal does not show the agent's text %q:\n%s", want, tail(string(out)))
	}
	md, err := os.ReadFile(filepath.Join(d.reports, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), agentErrorText) {
		t.Errorf("summary.md does not show the agent's text %q:\n%s", agentErrorText, md)
	}
}
