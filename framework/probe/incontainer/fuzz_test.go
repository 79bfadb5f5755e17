package incontainer

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
)

var seedRequest = Request{
	Volumes: []Volume{{Name: "a", Path: "/volumes/a"}, {Name: "h", Path: "/volumes/h", Root: true}},
	Probes: []probe.Step{{Root: "/volumes/a", Probe: framework.Probe{Name: "ls", Volume: "a", Op: framework.OpList,
		As: framework.User{UID: 1003, GID: 1003, Groups: []int64{2000}}}}},
	EachAsItsUser: true,
}

// FuzzDecodeRequest: the probe program's request decoder never panics, and what it accepts
// encodes and decodes back to the same request.
func FuzzDecodeRequest(f *testing.F) {
	b, _ := json.Marshal(seedRequest)
	f.Add(b)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"volumes":[{"name":"a","path":"relative"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeRequest(b)
		if err != nil {
			return
		}
		again, _ := json.Marshal(req)
		req2, err := DecodeRequest(again)
		if err != nil {
			t.Fatalf("an accepted request does not decode again: %v\n%s", err, again)
		}
		if b2, _ := json.Marshal(req2); !bytes.Equal(b2, again) {
			t.Fatalf("decoding is not stable:\n%s\n%s", again, b2)
		}
	})
}

// FuzzDecodeAnswer: the answer decoder (container and cluster targets) never panics and never
// accepts an answer that does not answer each volume and probe asked, in order.
func FuzzDecodeAnswer(f *testing.F) {
	obs := framework.Observation{APIVersion: framework.ObservationVersion,
		Volumes: []framework.VolumeObservation{{Name: "a", Paths: []framework.PathObservation{{Path: ".", Type: "dir", Mode: "0750"}}}, {Name: "h"}},
		Probes:  []framework.ProbeResult{{Name: "ls", Allowed: false, Errno: "EACCES"}}}
	b, _ := json.Marshal(obs)
	f.Add(b)
	f.Add([]byte(`{"volumes":[{"name":"a"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeAnswer(b, seedRequest)
		if err != nil {
			return
		}
		if len(got.Volumes) != len(seedRequest.Volumes) || len(got.Probes) != len(seedRequest.Probes) {
			t.Fatalf("accepted %d volumes and %d probes for %d and %d", len(got.Volumes), len(got.Probes), len(seedRequest.Volumes), len(seedRequest.Probes))
		}
		for i, v := range got.Volumes {
			if v.Name != seedRequest.Volumes[i].Name {
				t.Fatalf("accepted volume %q in place of %q", v.Name, seedRequest.Volumes[i].Name)
			}
		}
	})
}
