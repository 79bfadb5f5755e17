package image

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeEngine keeps tags; busy tags refuse removal; lost makes an import vanish.
type fakeEngine struct {
	tags     []string
	busy     map[string]bool
	lost     bool
	imported []string
}

func (f *fakeEngine) Has(_ context.Context, tag string) (bool, error) {
	return slices.Contains(f.tags, tag), nil
}

func (f *fakeEngine) Import(_ context.Context, tag string, changes []string, layer []byte) error {
	if len(layer) == 0 || len(changes) == 0 {
		return errors.New("an import without a layer or configuration")
	}
	f.imported = append(f.imported, tag)
	if !f.lost {
		f.tags = append(f.tags, tag)
	}
	return nil
}

func (f *fakeEngine) Tags(_ context.Context, repo string) ([]string, error) {
	var out []string
	for _, t := range f.tags {
		if strings.HasPrefix(t, repo+":") {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeEngine) Remove(_ context.Context, tag string) error {
	if f.busy[tag] {
		return errors.New("image is being used by a running container")
	}
	f.tags = slices.DeleteFunc(f.tags, func(t string) bool { return t == tag })
	return nil
}

// TestEnsure: the image is imported once (not when the engine has it), and the engine's other
// tags of its repository are removed, but one a container uses and those of other repositories.
func TestEnsure(t *testing.T) {
	img := Of([]byte("probe"))
	ctx := context.Background()
	e := &fakeEngine{tags: []string{Repo + ":old1", Repo + ":old2", RunnerRepo + ":other", "busybox:1"}, busy: map[string]bool{Repo + ":old2": true}}
	imported, removed, err := Ensure(ctx, e, img)
	if err != nil || !imported || !slices.Equal(e.imported, []string{img.Tag}) {
		t.Fatalf("imported %v (%v), engine imported %v; want %s once", imported, err, e.imported, img.Tag)
	}
	if !slices.Equal(removed, []string{Repo + ":old1"}) {
		t.Errorf("removed %v, want the older build not in use only", removed)
	}
	if want := []string{Repo + ":old2", RunnerRepo + ":other", "busybox:1", img.Tag}; !slices.Equal(e.tags, want) {
		t.Errorf("the engine's tags %v, want %v", e.tags, want)
	}
	if imported, _, err := Ensure(ctx, e, img); err != nil || imported || len(e.imported) != 1 {
		t.Errorf("a second Ensure imported again: %v %v %v", imported, err, e.imported)
	}
	runner := img.WithRunner([]byte("volperm"))
	if _, _, err := Ensure(ctx, e, runner); err != nil || !slices.Contains(e.tags, runner.Tag) || slices.Contains(e.tags, RunnerRepo+":other") {
		t.Errorf("the runner image: %v, tags %v", err, e.tags)
	}
	lost := &fakeEngine{lost: true}
	if _, _, err := Ensure(ctx, lost, img); err == nil || !strings.Contains(err.Error(), "missing after its import") {
		t.Errorf("an import the engine does not keep: %v", err)
	}
}
