package image

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestOf: the tag is the repository and the binary's hash, the same for the same bytes; the
// layer holds the binary (0755) and /tmp (1777), nothing else.
func TestOf(t *testing.T) {
	a, b, c := Of([]byte("probe")), Of([]byte("probe")), Of([]byte("probe2"))
	if a.Tag != b.Tag || a.Tag == c.Tag || !strings.HasPrefix(a.Tag, Repo+":") || len(a.Tag) != len(Repo)+1+12 {
		t.Errorf("tags %q %q %q: want %s:<12 hex> equal for equal bytes only", a.Tag, b.Tag, c.Tag, Repo)
	}
	layer, err := a.Layer()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h.Mode
		if h.Name == "volperm-probe" {
			if body, _ := io.ReadAll(tr); string(body) != "probe" {
				t.Errorf("binary in the layer is %q", body)
			}
		}
	}
	if len(got) != 2 || got["tmp/"] != 0o1777 || got["volperm-probe"] != 0o755 {
		t.Errorf("layer entries %v, want tmp/ 01777 and volperm-probe 0755", got)
	}
}

// The runner image: its own repository, a tag of both binaries, the layer with /volperm too,
// and `/volperm runner` as its entrypoint; the probe image's entrypoint stays the probe's.
func TestWithRunner(t *testing.T) {
	p := Of([]byte("probe"))
	a, b, c := p.WithRunner([]byte("volperm")), p.WithRunner([]byte("volperm")), p.WithRunner([]byte("volperm2"))
	if a.Tag != b.Tag || a.Tag == c.Tag || !strings.HasPrefix(a.Tag, RunnerRepo+":") || len(a.Tag) != len(RunnerRepo)+1+12 {
		t.Errorf("tags %q %q %q", a.Tag, b.Tag, c.Tag)
	}
	if strings.HasPrefix(p.Tag, RunnerRepo) || p.Changes()[0] != `ENTRYPOINT ["/volperm-probe"]` || a.Changes()[0] != `ENTRYPOINT ["/volperm"]` || a.Changes()[1] != `CMD ["runner"]` {
		t.Errorf("changes %q and %q", p.Changes(), a.Changes())
	}
	layer, err := a.Layer()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got[h.Name] = string(body)
	}
	if len(got) != 3 || got["volperm-probe"] != "probe" || got["volperm"] != "volperm" {
		t.Errorf("layer %v", got)
	}
}
