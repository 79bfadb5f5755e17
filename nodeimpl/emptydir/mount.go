package emptydir

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// mountInfo is what the reference node needs to know about the mount at a volume's directory.
type mountInfo struct {
	fsType string
	// pageSize is a hugetlbfs' pagesize option, as a quantity ("2M" -> 2Mi), nil if absent.
	pageSize *resource.Quantity
}

// mountAt returns the topmost mount whose mount point is dir (symlinks resolved), or nil.
func mountAt(dir string) (*mountInfo, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	m, err := mountinfo.At(dir)
	if err != nil || m == nil {
		return nil, err
	}
	ps, err := pageSizeOption(m.SuperOptions)
	if err != nil {
		return nil, fmt.Errorf("mount at %s: %w", dir, err)
	}
	return &mountInfo{fsType: m.FSType, pageSize: ps}, nil
}

// pageSizeOption is v1.37 emptydir getPageSize on one mount's options: "pagesize=2M" is read
// as 2Mi.
func pageSizeOption(opts string) (*resource.Quantity, error) {
	for _, opt := range strings.Split(opts, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(opt), "pagesize=")
		if !ok {
			continue
		}
		if !strings.HasSuffix(v, "i") {
			v += "i"
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("error getting page size from '%s' mount option: %v", opt, err)
		}
		return &q, nil
	}
	return nil, nil
}
