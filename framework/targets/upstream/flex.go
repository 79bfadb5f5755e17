package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/volperm/volperm/framework"
)

// fixtureDriver is the flexVolume driver the harness serves (framework.Case.Storage).
const fixtureDriver = framework.FixtureDriver

// populatedSuffix names the fixture driver's "storage is mounted" marker: the file
// DIR+populatedSuffix beside the volume dir, never inside it (the reference node's convention).
const populatedSuffix = ".volperm-populated"

// installFixtureDriver writes the "volperm/fixture" flexVolume driver for one case into the
// kubelet's flexVolume plugin dir, where the real prober (v1.37 pkg/volume/flexvolume
// probe.go) finds it as VENDOR~DRIVER/DRIVER. The driver is a shell script implementing the
// flexVolume call convention (init, mount DIR OPTIONS, unmount DIR): on the first mount of a
// volume it creates storage[NAME] in DIR (parents first, then lchown, then chmod to the exact
// mode) and leaves a marker, so later mounts do not re-populate; like the reference node's
// fixture it mounts nothing, so the kubelet calls it, and then walks, on every SetUp.
func installFixtureDriver(pluginDir string, storage map[string][]framework.File) error {
	dir := filepath.Join(pluginDir, "volperm~fixture")
	if err := os.MkdirAll(dir, 0755); err != nil {
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	script, err := fixtureScript(storage)
	if err != nil {
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fixture"), []byte(script), 0755); err != nil {
		return fmt.Errorf("install flexVolume driver %s: %w", fixtureDriver, err)
	}
	return nil
}

func fixtureScript(storage map[string][]framework.File) (string, error) {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
# volperm/fixture flexVolume driver, generated for one case by volperm's upstream target.
set -e
ok() { echo '{"status":"Success"}'; }
case "$1" in
init)
	echo '{"status":"Success","capabilities":{"attach":false}}'
	;;
mount)
	dir=$2
	marker="$dir` + populatedSuffix + `"
	if [ ! -e "$marker" ]; then
		case "$(basename "$dir")" in
`)
	vols := make([]string, 0, len(storage))
	for v := range storage {
		vols = append(vols, v)
	}
	sort.Strings(vols)
	for _, v := range vols {
		cmds, err := populateCommands(storage[v])
		if err != nil {
			return "", fmt.Errorf("storage of volume %q: %w", v, err)
		}
		fmt.Fprintf(&b, "\t\t%s)\n", shellQuote(v))
		for _, c := range cmds {
			fmt.Fprintf(&b, "\t\t\t%s\n", c)
		}
		b.WriteString("\t\t\t;;\n")
	}
	b.WriteString(`		esac
		: > "$marker"
	fi
	ok
	;;
unmount)
	rm -rf "$2" "$2` + populatedSuffix + `"
	ok
	;;
*)
	echo '{"status":"Not supported"}'
	exit 1
	;;
esac
`)
	return b.String(), nil
}

// populateCommands creates files under "$dir", shallowest first; the entry "." is "$dir" itself. Parents that files does not
// list are made 0755 by the driver (root). Every entry is created first, then lchown'ed, then
// chmod'ed (after the chown, which would clear setuid/setgid; five digits, so GNU chmod clears a
// directory's setgid too); symlinks are never chmod'ed. The chowns and chmods are batched, many
// paths per command, in the entries' order: a storage of thousands of files takes a few commands,
// not two processes per file (kubernetes issue 69699's large volume).
func populateCommands(files []framework.File) ([]string, error) {
	fs := make([]framework.File, len(files))
	copy(fs, files)
	for i := range fs {
		clean := filepath.Clean(fs[i].Path)
		if fs[i].Path == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, fmt.Errorf("storage path %q must be relative and inside the volume", fs[i].Path)
		}
		fs[i].Path = clean
	}
	sort.SliceStable(fs, func(i, j int) bool { return strings.Count(fs[i].Path, "/") < strings.Count(fs[j].Path, "/") })
	var cmds []string
	made := map[string]bool{}
	owners, modes := &batches{}, &batches{}
	for _, f := range fs {
		p := `"$dir"/` + shellQuote(f.Path)
		if f.Path == "." { // the storage's own root: not created, only its owner and mode set
			p = `"$dir"`
		}
		if parent := filepath.Dir(f.Path); parent != "." {
			acc := ""
			for _, part := range strings.Split(parent, "/") {
				acc = filepath.Join(acc, part)
				if made[acc] {
					continue
				}
				made[acc] = true
				q := `"$dir"/` + shellQuote(acc)
				cmds = append(cmds, fmt.Sprintf("[ -d %s ] || { mkdir %s; chmod 00755 %s; }", q, q, q))
			}
		}
		switch {
		case f.Path == ".":
		case f.Symlink != "":
			cmds = append(cmds, fmt.Sprintf("ln -s %s %s", shellQuote(f.Symlink), p))
		case f.Dir:
			cmds = append(cmds, "mkdir "+p)
			made[f.Path] = true
		default:
			cmds = append(cmds, ": > "+p)
		}
		owners.add(fmt.Sprintf("chown -h %d:%d", f.UID, f.GID), p)
		if f.Symlink == "" {
			modes.add(fmt.Sprintf("chmod 0%04o", f.Mode&07777), p)
		}
	}
	return append(append(cmds, owners.commands()...), modes.commands()...), nil
}

// batches groups paths by command ("chown -h 0:0"), in the order of their first path, into
// commands of at most batchSize paths each.
type batches struct {
	order []string
	paths map[string][]string
}

const batchSize = 200

func (b *batches) add(cmd, path string) {
	if b.paths == nil {
		b.paths = map[string][]string{}
	}
	if _, ok := b.paths[cmd]; !ok {
		b.order = append(b.order, cmd)
	}
	b.paths[cmd] = append(b.paths[cmd], path)
}

func (b *batches) commands() []string {
	var out []string
	for _, cmd := range b.order {
		ps := b.paths[cmd]
		for len(ps) > 0 {
			n := min(len(ps), batchSize)
			out = append(out, cmd+" "+strings.Join(ps[:n], " "))
			ps = ps[n:]
		}
	}
	return out
}

// shellQuote quotes s for sh: inside single quotes nothing is special but the quote itself.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
