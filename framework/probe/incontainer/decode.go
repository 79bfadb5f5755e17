package incontainer

import (
	"fmt"
	"path/filepath"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
)

// DecodeRequest reads the probe program's request: exactly one JSON object, no unknown fields,
// every volume named with an absolute path, every probe with a root and an op
// (FuzzDecodeRequest).
func DecodeRequest(b []byte) (Request, error) {
	var req Request
	if err := probe.DecodeOne(b, &req); err != nil {
		return Request{}, fmt.Errorf("invalid JSON: %w", err)
	}
	for i, v := range req.Volumes {
		if v.Name == "" || !filepath.IsAbs(v.Path) {
			return Request{}, fmt.Errorf("volumes[%d]: needs a name and an absolute path", i)
		}
	}
	for i, s := range req.Probes {
		if s.Root == "" || s.Probe.Op == "" {
			return Request{}, fmt.Errorf("probes[%d]: needs a root and a probe op", i)
		}
	}
	return req, nil
}

// DecodeAnswer reads the probe program's answer to req: exactly one Observation holding one
// volume per volume asked and one result per probe asked (FuzzDecodeAnswer). The container and
// cluster targets read every answer through it.
func DecodeAnswer(b []byte, req Request) (*framework.Observation, error) {
	var obs framework.Observation
	if err := probe.DecodeOne(b, &obs); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(obs.Volumes) != len(req.Volumes) || len(obs.Probes) != len(req.Probes) {
		return nil, fmt.Errorf("%d volumes and %d probes for %d and %d asked", len(obs.Volumes), len(obs.Probes), len(req.Volumes), len(req.Probes))
	}
	for i, v := range obs.Volumes {
		if v.Name != req.Volumes[i].Name {
			return nil, fmt.Errorf("volume %d is %q, asked %q", i, v.Name, req.Volumes[i].Name)
		}
	}
	return &obs, nil
}
