// Package gates holds the feature gates of the reference node and apiserver: their names, their
// defaults, and the parsing of Kubernetes' `Name=true,Other=false` syntax.
package gates

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

const (
	// EmptyDirVolumeMode is KEP-5502's gate: alpha in v1.37, default off, on kube-apiserver and kubelet.
	EmptyDirVolumeMode = "EmptyDirVolumeMode"
	// PreservePermissions is the reference implementation's gate for the preservePermissions
	// proposal (seed 002). Not an upstream gate. Default off.
	PreservePermissions = "PreservePermissions"
	// AtomicWriteVolumeUserFields is KEP-5936's gate: `defaultUser` and `user` on secret,
	// configMap, downwardAPI and projected volumes. Alpha in v1.37, default off, on
	// kube-apiserver and kubelet.
	AtomicWriteVolumeUserFields = "AtomicWriteVolumeUserFields"
	// VolumeBindMountOptions is KEP-5855's gate: alpha in v1.37, default off, on kube-apiserver
	// and kubelet (volumeMounts[].bindMountOptions).
	VolumeBindMountOptions = "VolumeBindMountOptions"
)

// Defaults maps every known gate to its default value.
var Defaults = map[string]bool{
	EmptyDirVolumeMode:          false,
	PreservePermissions:         false,
	AtomicWriteVolumeUserFields: false,
	VolumeBindMountOptions:      false,
}

// Register adds a gate of the reference node with its default: the reference node's own row of
// a gate that a fork or a test binary adds (its framework row: framework.RegisterGate). Call it
// from an init function; a known name panics.
func Register(name string, def bool) {
	if _, dup := Defaults[name]; dup || name == "" {
		panic(fmt.Sprintf("gates.Register(%q): empty, or a gate already", name))
	}
	Defaults[name] = def
}

// Set is the gates of one component; a gate missing from it has its default.
type Set map[string]bool

// Enabled reports whether name is on in s.
func (s Set) Enabled(name string) bool {
	if v, ok := s[name]; ok {
		return v
	}
	return Defaults[name]
}

// Merge returns s with every gate of o applied over it.
func (s Set) Merge(o map[string]bool) Set {
	out := Set{}
	for k, v := range s {
		out[k] = v
	}
	for k, v := range o {
		out[k] = v
	}
	return out
}

// Validate returns an error naming the first unknown gate.
func (s Set) Validate() error {
	for _, name := range s.sortedNames() {
		if _, ok := Defaults[name]; !ok {
			return fmt.Errorf("unknown feature gate %q: known gates are %s", name, strings.Join(Known(), ", "))
		}
	}
	return nil
}

func (s Set) sortedNames() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// String renders s in `Name=true,Other=false` syntax, sorted.
func (s Set) String() string {
	parts := make([]string, 0, len(s))
	for _, n := range s.sortedNames() {
		parts = append(parts, n+"="+strconv.FormatBool(s[n]))
	}
	return strings.Join(parts, ",")
}

// Known lists the known gate names, sorted.
func Known() []string {
	names := make([]string, 0, len(Defaults))
	for n := range Defaults {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Parse reads Kubernetes' `--feature-gates` syntax: `Name=true,Other=false`. Unknown names and
// values other than true/false are errors that say what to write instead.
func Parse(spec string) (Set, error) {
	s := Set{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("feature gate %q: missing value, write %s=true or %s=false", part, part, part)
		}
		name = strings.TrimSpace(name)
		b, err := strconv.ParseBool(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("feature gate %s: value %q is not true or false", name, val)
		}
		s[name] = b
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}
