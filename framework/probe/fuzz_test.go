package probe

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/volperm/volperm/framework"
)

// FuzzDecodeSteps: a probe child's request decoder never panics, and what it accepts encodes
// and decodes back to the same steps.
func FuzzDecodeSteps(f *testing.F) {
	for _, s := range [][]Step{
		{{Root: "/v/a", Probe: framework.Probe{Name: "ls", Volume: "a", Op: framework.OpList, As: framework.User{UID: 1003, GID: 1003}}}},
		{{Root: "/v/b", Probe: framework.Probe{Name: "w", Volume: "b", Path: "x/y", Op: framework.OpWrite}}, {Root: "/v/b", Probe: framework.Probe{Op: framework.OpDelete, Path: "x"}}},
		{},
	} {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`[{"root":"/v","probe":{"op":"stat"}}] []`))
	f.Add([]byte(`[{"root":"/v","probe":{"op":"stat","extra":1}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		steps, err := DecodeSteps(bytes.NewReader(b))
		if err != nil {
			return
		}
		again, err := json.Marshal(steps)
		if err != nil {
			t.Fatal(err)
		}
		steps2, err := DecodeSteps(bytes.NewReader(again))
		if err != nil {
			t.Fatalf("accepted steps do not decode again: %v\n%s", err, again)
		}
		if b2, _ := json.Marshal(steps2); !bytes.Equal(b2, again) {
			t.Fatalf("decoding is not stable:\n%s\n%s", again, b2)
		}
	})
}

// FuzzDecodeResults: a probe child's answer decoder never panics and never accepts an answer
// with another number of results than probes asked.
func FuzzDecodeResults(f *testing.F) {
	b, _ := json.Marshal([]framework.ProbeResult{{Name: "ls", Allowed: true}, {Name: "w", Errno: "EACCES"}})
	f.Add(b, 2)
	f.Add([]byte(`[]`), 0)
	f.Add([]byte(`[{"name":"x","allowed":true}]{}`), 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		results, err := DecodeResults(b, n)
		if err == nil && len(results) != n {
			t.Fatalf("accepted %d results for %d probes", len(results), n)
		}
	})
}
