package incontainer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
)

func TestProbeMain(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0600); err != nil {
		t.Fatal(err)
	}
	req, err := json.Marshal(Request{
		Volumes: []Volume{{Name: "tree", Path: dir}, {Name: "root", Path: filepath.Join(dir, "f"), Root: true}},
		Probes: []probe.Step{
			{Root: dir, Probe: framework.Probe{Name: "mkdir", Op: framework.OpMkdir, Path: "d"}},
			{Root: dir, Probe: framework.Probe{Name: "again", Op: framework.OpMkdir, Path: "d"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		// wantPaths is how many entries the tree snapshot lists (0 = no answer expected).
		wantPaths int
	}{
		{"request as argument", []string{"-request", string(req)}, "", 0, 2},
		{"request on stdin", nil, string(req), 0, 3}, // the first run made "d"
		{"bad JSON", []string{"-request", "{"}, "", 2, 0},
		{"wait and request", []string{"-wait", "-request", "{}"}, "", 2, 0},
		{"stray argument", []string{"x"}, "", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := ProbeMain(tt.args, strings.NewReader(tt.stdin), &out); code != tt.wantCode {
				t.Fatalf("exit %d, want %d", code, tt.wantCode)
			}
			if tt.wantPaths == 0 {
				return
			}
			var obs framework.Observation
			if err := json.Unmarshal(out.Bytes(), &obs); err != nil {
				t.Fatalf("answer %q: %v", out.String(), err)
			}
			if len(obs.Volumes) != 2 || len(obs.Volumes[0].Paths) != tt.wantPaths || obs.Volumes[1].Paths[0].Mode != "0600" {
				t.Errorf("volumes: %+v", obs.Volumes)
			}
			if len(obs.Probes) != 2 || obs.Probes[1].Errno != "EEXIST" {
				t.Errorf("probes: %+v", obs.Probes)
			}
		})
	}
}

// TestParseIDMap: a pod's uid_map read from inside is one line "0 HOST LENGTH"; anything else is
// not one range from id 0 (docs/observation.md "userNamespace").
func TestParseIDMap(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want framework.IDMap
		ok   bool
	}{
		{"         0 2147483648      65536\n", framework.IDMap{HostID: 2147483648, Length: 65536}, true},
		{"0 0 4294967295\n", framework.IDMap{HostID: 0, Length: 4294967295}, true},
		{"0 65536 1000\n1000 1000 1\n", framework.IDMap{}, false},
		{"1 65536 65536\n", framework.IDMap{}, false},
		{"", framework.IDMap{}, false},
		{"0 x 65536", framework.IDMap{}, false},
	} {
		got, ok := ParseIDMap(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseIDMap(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if u := framework.UserNamespaceOf([]framework.IDMap{{HostID: 0, Length: 4294967295}}); u.Aligned {
		t.Errorf("the node's own namespace (host id 0) counted as a kubelet's aligned range: %s", u)
	}
}
