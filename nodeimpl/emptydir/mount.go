package emptydir

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// mountInfo is what the reference node needs to know about the mount at a volume's directory.
type mountInfo struct {
	fsType string
	// pageSize is a hugetlbfs' pagesize option, as a quantity ("2M" -> 2Mi), nil if absent.
	pageSize *resource.Quantity
}

// mountAt returns the topmost mount whose mount point is dir, or nil if dir is not a mount
// point (or does not exist). It reads /proc/self/mountinfo, which (unlike v1.37's
// IsLikelyNotMountPoint device comparison) also sees bind mounts.
func mountAt(dir string) (*mountInfo, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list mounts: %w", err)
	}
	defer f.Close()
	var found *mountInfo
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS"
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(fields) < sep+4 || unescape(fields[4]) != dir {
			continue
		}
		m := &mountInfo{fsType: fields[sep+1]}
		ps, err := pageSizeOption(fields[sep+3])
		if err != nil {
			return nil, fmt.Errorf("mount at %s: %w", dir, err)
		}
		m.pageSize = ps
		found = m // later lines are mounted on top of earlier ones
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	return found, nil
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

// unescape undoes mountinfo's octal escapes (\040 for a space, ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
