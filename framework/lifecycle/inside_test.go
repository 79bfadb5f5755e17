package lifecycle_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/probe/incontainer"
)

// recorder is an Inside that answers from this machine (Here) and records each request's
// volumes and probes.
type recorder struct {
	sizes [][2]int
	wrong bool // answer one volume too few
}

func (r *recorder) Request(ctx context.Context, req incontainer.Request) (*framework.Observation, error) {
	r.sizes = append(r.sizes, [2]int{len(req.Volumes), len(req.Probes)})
	obs, err := lifecycle.Here{}.Request(ctx, req)
	if err == nil && r.wrong && len(obs.Volumes) > 0 {
		obs.Volumes = obs.Volumes[1:]
	}
	return obs, err
}

// RequestAll splits a Request into parts of at most max bytes of JSON, volumes then probes,
// each in order, one too large travelling alone, and answers them as one; a part answered with
// a volume missing fails the whole.
func TestRequestAll(t *testing.T) {
	dir := t.TempDir()
	var req incontainer.Request
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		req.Volumes = append(req.Volumes, incontainer.Volume{Name: name, Path: p})
	}
	// The third volume's path is longer than max: it goes alone.
	long := filepath.Join(dir, "c", strings.Repeat("x", 200))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	req.Volumes[2].Path = long
	r := &recorder{}
	max := 2*len(dir) + 90
	obs, err := lifecycle.RequestAll(context.Background(), r, req, max)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range obs.Volumes {
		names = append(names, v.Name)
		if len(v.Paths) == 0 || v.Paths[0].Path != "." {
			t.Errorf("volume %s: paths %+v", v.Name, v.Paths)
		}
	}
	if strings.Join(names, "") != "abcde" {
		t.Errorf("volumes answered %q, want abcde in order", names)
	}
	if len(r.sizes) < 3 || r.sizes[0][0] != 2 {
		t.Errorf("requests %v: want several, the first of two volumes", r.sizes)
	}
	for _, s := range r.sizes {
		if s[0] == 0 && s[1] == 0 {
			t.Errorf("an empty request was sent: %v", r.sizes)
		}
	}
	if _, err := lifecycle.RequestAll(context.Background(), &recorder{wrong: true}, req, max); err == nil || !strings.Contains(err.Error(), "answered 1 volumes for 2") {
		t.Errorf("a part answered short: %v", err)
	}
}

// ExecInside encodes the Request for a probe binary (here the probe program in this process),
// decodes its answer; an answer that is not one names the place.
func TestExecInside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	send := func(_ context.Context, req []byte) ([]byte, error) {
		var out bytes.Buffer
		if code := incontainer.ProbeMain([]string{"-request", string(req)}, nil, &out); code != 0 {
			return nil, errors.New("probe exited non-zero")
		}
		return out.Bytes(), nil
	}
	in := lifecycle.ExecInside("pod p", send)
	steps := []probe.Step{{Root: dir, Probe: framework.Probe{Name: "read", Op: framework.OpRead, Path: "f", Volume: "v"}}}
	obs, err := in.Request(context.Background(), incontainer.Request{Volumes: []incontainer.Volume{{Name: "v", Path: dir}}, Probes: steps})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.Volumes) != 1 || len(obs.Volumes[0].Paths) != 2 || len(obs.Probes) != 1 || !obs.Probes[0].Allowed {
		t.Errorf("answer %+v", obs)
	}
	bad := lifecycle.ExecInside("pod p", func(context.Context, []byte) ([]byte, error) { return []byte("not json"), nil })
	if _, err := bad.Request(context.Background(), incontainer.Request{}); err == nil || !strings.Contains(err.Error(), "probe answer of pod p") {
		t.Errorf("a bad answer: %v", err)
	}
}

// ProbeSteps puts each probe at its volume's root; a probe of a volume not set up is an error.
func TestProbeSteps(t *testing.T) {
	probes := []framework.Probe{{Name: "p", Volume: "v"}, {Name: "q", Volume: "w"}}
	if _, err := lifecycle.ProbeSteps(probes, map[string]string{"v": "/a"}); err == nil || err.Error() != `probe "q": volume "w" was not set up` {
		t.Errorf("a volume not set up: %v", err)
	}
	steps, err := lifecycle.ProbeSteps(probes, map[string]string{"v": "/a", "w": "/b"})
	if err != nil || len(steps) != 2 || steps[1].Root != "/b" {
		t.Errorf("steps %+v, %v", steps, err)
	}
}
