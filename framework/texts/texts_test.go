package texts_test

import (
	"os"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/texts"
)

// TestDocMatchesOracle: docs/texts.md is what `volperm spec texts` prints for the catalogue, so
// that the texts an agent writer reads are the ones the oracle compares.
func TestDocMatchesOracle(t *testing.T) {
	want := texts.Markdown(texts.Collect(catalogue.All()))
	got, err := os.ReadFile("../../docs/texts.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("docs/texts.md differs from the oracle's texts at line %d (regenerate: make build && bin/volperm spec texts > docs/texts.md):\n doc:    %s\n oracle: %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("docs/texts.md has %d lines, the oracle's texts %d (regenerate: make build && bin/volperm spec texts > docs/texts.md)", len(gl), len(wl))
	}
}

// TestEveryWhereHasTexts: the catalogue makes the oracle produce texts of each kind, and each
// text once per kind.
func TestEveryWhereHasTexts(t *testing.T) {
	ts := texts.Collect(catalogue.All())
	by := map[texts.Where]map[string]bool{}
	for _, x := range ts {
		if by[x.Where] == nil {
			by[x.Where] = map[string]bool{}
		}
		if by[x.Where][x.Text] {
			t.Errorf("%s: %q twice", x.Where, x.Text)
		}
		by[x.Where][x.Text] = true
		if x.Cases == 0 || x.Example == "" {
			t.Errorf("%s: %q has no case", x.Where, x.Text)
		}
	}
	for _, w := range []texts.Where{texts.AdmissionError, texts.AdmissionWarning, texts.SetUpError, texts.SandboxError, texts.ContainerError} {
		if len(by[w]) == 0 {
			t.Errorf("no %s text in the catalogue", w)
		}
	}
}
