package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/volperm/volperm/framework/caseroot"
)

// foreignMounts makes side.ForeignMounts mounts that are not volperm's, as a node's containers
// and volumes are (issue 52: a kubelet node has hundreds to thousands): small tmpfs mounts in a
// directory of their own beside the case roots (the side's work dir, on the same filesystem, so
// that nothing about where they are spares the lookups). The directory is a case root
// (caseroot.Roots): a killed bench's mounts are removed by the next run's sweep. undo unmounts
// and removes them.
func foreignMounts(side Side, workDir string) (undo func() error, err error) {
	if side.ForeignMounts == 0 {
		return func() error { return nil }, nil
	}
	if side.WorkDir != "" {
		workDir = side.WorkDir
	}
	roots, err := caseroot.New(workDir)
	if err != nil {
		return nil, err
	}
	dir, err := roots.Make(caseroot.Prefix + "foreign-")
	if err != nil {
		return nil, err
	}
	undo = roots.RemoveAll
	for i := range side.ForeignMounts {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(p, 0o755); err != nil {
			return nil, fmt.Errorf("foreign mount %d: %w (and %v)", i, err, undo())
		}
		if err := syscall.Mount("volperm-foreign", p, "tmpfs", 0, "size=4k"); err != nil {
			return nil, fmt.Errorf("foreign mount %d of %d: %w (mounts need root; and %v)", i, side.ForeignMounts, err, undo())
		}
	}
	return undo, nil
}
