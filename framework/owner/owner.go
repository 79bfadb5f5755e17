// Package owner marks what a volperm run creates with the run that created it, and tells whether
// that run is still alive, so that the next run (or `volperm cleanup`) removes what a killed run
// left behind and never touches a live run's resources (docs/cleanup.md).
//
// A run is named by this machine (/etc/machine-id), its boot (/proc/sys/kernel/random/boot_id),
// its pid and the pid's start time (/proc/PID/stat field 22): a pid reused after the run died,
// or after a reboot, is not the run.
package owner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Mark names one run.
type Mark struct {
	Machine   string `json:"machine"`
	Boot      string `json:"boot"`
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// Labels carry a Mark on containers, networks and cluster objects (ids are kept without their
// dashes, so each fits a Kubernetes label value).
const (
	LabelMachine = "volperm.dev/owner-machine"
	LabelBoot    = "volperm.dev/owner-boot"
	LabelPID     = "volperm.dev/owner-pid"
	LabelStart   = "volperm.dev/owner-start"
)

// MarkerFile is the file in a directory volperm made that holds its owner's Mark as JSON.
const MarkerFile = ".volperm-owner.json"

var (
	selfOnce sync.Once
	self     Mark
)

// Self is this process's Mark.
func Self() Mark {
	selfOnce.Do(func() {
		self = Mark{Machine: compact(machineID()), Boot: compact(bootID()), PID: os.Getpid()}
		self.StartTime, _ = startTime(self.PID)
	})
	return self
}

// String reads "pid 1234 started at tick 5678".
func (m Mark) String() string {
	return fmt.Sprintf("pid %d started at tick %d", m.PID, m.StartTime)
}

// OnThisMachine reports whether m's run ran on this machine (any boot).
func (m Mark) OnThisMachine() bool { return m.Machine != "" && m.Machine == Self().Machine }

// Alive reports whether m's run is still running. A run of another machine counts as alive:
// volperm cannot tell, so it never touches what such a run made.
func (m Mark) Alive() bool {
	s := Self()
	if !m.OnThisMachine() {
		return true
	}
	if m.Boot != s.Boot {
		return false
	}
	st, err := startTime(m.PID)
	return err == nil && st == m.StartTime
}

// Labels are m as labels.
func (m Mark) Labels() map[string]string {
	return map[string]string{
		LabelMachine: m.Machine, LabelBoot: m.Boot,
		LabelPID: strconv.Itoa(m.PID), LabelStart: strconv.FormatUint(m.StartTime, 10),
	}
}

// FromLabels reads a Mark from labels; ok is false when they carry none.
func FromLabels(l map[string]string) (Mark, bool) {
	pid, err1 := strconv.Atoi(l[LabelPID])
	st, err2 := strconv.ParseUint(l[LabelStart], 10, 64)
	if err1 != nil || err2 != nil || l[LabelMachine] == "" {
		return Mark{}, false
	}
	return Mark{Machine: l[LabelMachine], Boot: l[LabelBoot], PID: pid, StartTime: st}, true
}

// Write puts this run's marker file into dir, atomically (a kill leaves no half-written one).
func Write(dir string) error {
	b, err := json.Marshal(Self())
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, MarkerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("mark %s as this run's: %w", dir, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, MarkerFile)); err != nil {
		return fmt.Errorf("mark %s as this run's: %w", dir, err)
	}
	return nil
}

// Tag is m's pid and start time as a name part, "1234.5678": a directory named with it belongs
// to m's run even before its marker file exists (FromTag).
func (m Mark) Tag() string { return fmt.Sprintf("%d.%d", m.PID, m.StartTime) }

// tagRE finds a Tag between dashes in a name: "volperm-ref-1234.5678-99999".
var tagRE = regexp.MustCompile(`-([0-9]+)\.([0-9]+)-[^-]*$`)

// FromTag reads the Mark of a name made with Tag. A name says nothing of the machine or the
// boot: it is taken as this machine's and this boot's, since only this machine's work dirs are
// swept; a pid reused since has another start time.
func FromTag(name string) (Mark, bool) {
	sm := tagRE.FindStringSubmatch(name)
	if sm == nil {
		return Mark{}, false
	}
	pid, err1 := strconv.Atoi(sm[1])
	st, err2 := strconv.ParseUint(sm[2], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return Mark{}, false
	}
	s := Self()
	return Mark{Machine: s.Machine, Boot: s.Boot, PID: pid, StartTime: st}, true
}

// Read returns the Mark in dir's marker file; ok is false when dir has none (volperm did not
// make it, or was killed before it could write it).
func Read(dir string) (Mark, bool) {
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		return Mark{}, false
	}
	var m Mark
	if json.Unmarshal(b, &m) != nil || m.PID <= 0 {
		return Mark{}, false
	}
	return m, true
}

func compact(id string) string { return strings.ReplaceAll(id, "-", "") }

func machineID() string {
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b))
		}
	}
	// No machine id: the hostname stands in (a container without /etc/machine-id).
	h, _ := os.Hostname()
	return "host-" + h
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTime is field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
func startTime(pid int) (uint64, error) {
	f, err := Stat(pid)
	if err != nil {
		return 0, err
	}
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Stat reads /proc/PID/stat and returns its fields from the third (state) on: the command
// (field 2) is in parentheses and may hold spaces and parentheses, so fields are counted from
// the last ')'.
func Stat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	return strings.Fields(s[i+1:]), nil
}
