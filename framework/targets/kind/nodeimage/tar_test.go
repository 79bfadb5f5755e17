package nodeimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWriteTarKeepsTheTreeAndLetsEntriesReplaceFiles: hard links stay links, symlinks stay
// symlinks, and an entry replaces the rootfs file at its path instead of following it.
func TestWriteTarKeepsTheTreeAndLetsEntriesReplaceFiles(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "etc", "containerd"), 0o755))
	must(os.WriteFile(filepath.Join(root, "etc", "containerd", "config.toml"), []byte("debian"), 0o644))
	must(os.WriteFile(filepath.Join(root, "etc", "a"), []byte("a"), 0o600))
	must(os.Link(filepath.Join(root, "etc", "a"), filepath.Join(root, "etc", "b")))
	must(os.Symlink("usr/lib", filepath.Join(root, "lib")))

	var buf bytes.Buffer
	entries := []entry{
		{path: "etc/containerd/config.toml", mode: 0o644, data: []byte("kind")},
		{path: "kind", dir: true, mode: 0o755},
		{path: "usr/sbin/init", link: "/usr/lib/systemd/systemd"},
	}
	must(writeTar(&buf, root, entries))

	type got struct {
		typ     byte
		mode    int64
		link    string
		content string
	}
	want := map[string]got{
		"etc/":                       {tar.TypeDir, 0o755, "", ""},
		"etc/a":                      {tar.TypeReg, 0o600, "", "a"},
		"etc/b":                      {tar.TypeLink, 0o600, "etc/a", ""},
		"etc/containerd/":            {tar.TypeDir, 0o755, "", ""},
		"etc/containerd/config.toml": {tar.TypeReg, 0o644, "", "kind"},
		"lib":                        {tar.TypeSymlink, 0o777, "usr/lib", ""},
		"kind/":                      {tar.TypeDir, 0o755, "", ""},
		"usr/sbin/init":              {tar.TypeSymlink, 0o777, "/usr/lib/systemd/systemd", ""},
	}
	seen := map[string]got{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(err)
		data, err := io.ReadAll(tr)
		must(err)
		if _, dup := seen[h.Name]; dup {
			t.Errorf("%s written twice", h.Name)
		}
		seen[h.Name] = got{h.Typeflag, h.Mode & 0o7777, h.Linkname, string(data)}
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("tar holds\n%v\nwant\n%v", seen, want)
	}
}
