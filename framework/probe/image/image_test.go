package image

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestOf: the tag is the repository and the binary's hash, the same for the same bytes; the
// layer holds the binary (0755), /tmp (1777) and /etc's passwd and group (0644), nothing else.
func TestOf(t *testing.T) {
	a, b, c := Of([]byte("probe")), Of([]byte("probe")), Of([]byte("probe2"))
	if a.Tag != b.Tag || a.Tag == c.Tag || !strings.HasPrefix(a.Tag, Repo+":") || len(a.Tag) != len(Repo)+1+12 {
		t.Errorf("tags %q %q %q: want %s:<12 hex> equal for equal bytes only", a.Tag, b.Tag, c.Tag, Repo)
	}
	got := layerEntries(t, a)
	if got["volperm-probe"].body != "probe" {
		t.Errorf("binary in the layer is %q", got["volperm-probe"].body)
	}
	if len(got) != 5 || got["tmp/"].mode != 0o1777 || got["volperm-probe"].mode != 0o755 ||
		got["etc/passwd"].body != Passwd() || got["etc/group"].body != GroupFile() || got["etc/group"].mode != 0o644 {
		t.Errorf("layer entries %v, want tmp/ 01777, volperm-probe 0755, etc/passwd and etc/group 0644", got)
	}
	if !strings.Contains(GroupFile(), "volperm-extra:x:50000:volperm\n") || !strings.Contains(Passwd(), "volperm:x:5000:5000:") {
		t.Errorf("/etc/group %q, /etc/passwd %q: want user volperm 5000 in group volperm-extra 50000", GroupFile(), Passwd())
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
	got := layerEntries(t, a)
	if len(got) != 6 || got["volperm-probe"].body != "probe" || got["volperm"].body != "volperm" {
		t.Errorf("layer %v", got)
	}
}

// entry is one file of a layer.
type entry struct {
	mode int64
	body string
}

// layerEntries reads img's layer by name.
func layerEntries(t *testing.T, img Image) map[string]entry {
	t.Helper()
	layer, err := img.Layer()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]entry{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = entry{mode: h.Mode, body: string(body)}
	}
}
