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
