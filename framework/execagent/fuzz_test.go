package execagent

import (
	"encoding/json"
	"testing"

	"github.com/volperm/volperm/framework/execproto"
)

// FuzzDecodeSetUp: an agent's setup answer never panics the harness, and an accepted answer
// holds this protocol version and exactly one result per volume, every failure with its text.
func FuzzDecodeSetUp(f *testing.F) {
	ok, _ := json.Marshal(execproto.SetUpResponse{ProtocolVersion: execproto.Version, Volumes: []execproto.VolumeResult{
		{Name: "a", OK: true}, {Name: "b", Error: "hostPath type check failed: /x is not a directory"}}})
	f.Add(ok)
	f.Add([]byte(`{"protocolVersion":"volperm.dev/exec/v0","volumes":[]}`))
	f.Add([]byte(`{"protocolVersion":"` + execproto.Version + `","volumes":[{"name":"a","ok":true},{"name":"a","ok":true}]}`))
	f.Add([]byte(`{} {}`))
	volumes := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, out []byte) {
		got, err := decodeSetUp(out, volumes, execproto.Version)
		if err != nil {
			return
		}
		var ver struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(out, &ver) != nil || ver.ProtocolVersion != execproto.Version {
			t.Fatalf("accepted an answer of another protocol version: %q", out)
		}
		if len(got) != len(volumes) {
			t.Fatalf("accepted %d results for %d volumes", len(got), len(volumes))
		}
		for _, v := range volumes {
			r, ok := got[v]
			if !ok || r.Name != v || (!r.OK && r.Error == "") {
				t.Fatalf("accepted result %+v for volume %q", r, v)
			}
		}
	})
}

// FuzzDecodeTearDown: the teardown answer decoder never panics and checks the version.
func FuzzDecodeTearDown(f *testing.F) {
	b, _ := json.Marshal(execproto.TearDownResponse{ProtocolVersion: execproto.Version, OK: true})
	f.Add(b)
	f.Add([]byte(`{"protocolVersion":"x","ok":true}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		var td execproto.TearDownResponse
		if err := decode(out, &td, execproto.Version); err == nil && td.ProtocolVersion != execproto.Version {
			t.Fatalf("accepted protocol version %q", td.ProtocolVersion)
		}
	})
}
