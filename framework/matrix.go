package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Matrix is a target made of one target per release cell (kube-apiserver release x kubelet
// release): `upstream@matrix` is every cell the version-skew policy allows, each the real code
// of its two releases. A case that names no releases runs in every cell its gates can exist in
// (RunAsReleases: one spec per cell); a case naming its releases runs in that cell. Each case
// goes to its cell's target (Route: framework.Ask asks the cell, so the matrix answers no
// question of a case itself); Prepare hands each cell its cases.
type Matrix struct {
	name  string
	cells []Releases
	by    map[Releases]Target
	// closers are what the cells share (the halves): closed once each, in order.
	closers []io.Closer
	// parallel: Prepare prepares the cells at once (InParallel).
	parallel bool
	// details are added to Info's (WithDetails).
	details map[string]string
}

// WithDetails adds details to the matrix's Info: what its cells share that no cell says (the
// cluster target over node pools: the nodes it left out).
func (m *Matrix) WithDetails(d map[string]string) *Matrix {
	m.details = d
	return m
}

// InParallel makes Prepare prepare every cell at once: for cells that share no mutable state
// and each have a machine of their own (kind@matrix: a worker per kubelet release, an
// apiserver per gate setting). In-process cells share the CPUs and gain nothing.
func (m *Matrix) InParallel() *Matrix {
	m.parallel = true
	return m
}

// NewMatrix builds the matrix name of the targets by cell (Releases with both fields set), in
// the order of cells; closers are closed by Close (the cells' targets are not: they share them).
func NewMatrix(name string, cells []Releases, by map[Releases]Target, closers []io.Closer) *Matrix {
	return &Matrix{name: name, cells: cells, by: by, closers: closers}
}

// Cells are the matrix's cells, newest first (RunAsReleases).
func (m *Matrix) Cells() []Releases { return m.cells }

// cell is the target of c's cell, or why there is none: the cell c is observed in (a case whose
// steps replace the kubelet runs where its last kubelet release is: ObservedReleases).
func (m *Matrix) cell(c *Case) (Target, string) {
	r := ObservedReleases(c)
	if t, ok := m.by[r]; ok {
		return t, ""
	}
	return nil, fmt.Sprintf("no cell kube-apiserver %s x kubelet %s in %s", r.APIServer, r.Kubelet, m.name)
}

// Info names the matrix and its cells.
func (m *Matrix) Info() TargetInfo {
	info := TargetInfo{Name: m.name, Details: map[string]string{"cells": fmt.Sprint(len(m.cells))}}
	for k, v := range m.details {
		info.Details[k] = v
	}
	for _, r := range m.cells {
		ti := m.by[r].Info()
		info.Details["cell "+r.APIServer+" x "+r.Kubelet] = ti.Name
	}
	return info
}

// Route is c's cell (Router): framework.Ask asks it every question of c.
func (m *Matrix) Route(c *Case) (Target, string) { return m.cell(c) }

// Supports asks c's cell.
func (m *Matrix) Supports(c *Case) (bool, string) {
	t, why := m.cell(c)
	if t == nil {
		return false, why
	}
	return t.Supports(c)
}

// Observe has c's cell observe it.
func (m *Matrix) Observe(ctx context.Context, c *Case) (*Observation, error) {
	t, why := m.cell(c)
	if t == nil {
		return nil, errors.New(why)
	}
	obs, err := t.Observe(ctx, c)
	if obs != nil {
		obs.Source = m.name
	}
	return obs, err
}

// BatchesRun: a matrix prepares the whole run at once when one of its cells does
// (RunBatcher; each cell is then given its cases of every area).
func (m *Matrix) BatchesRun() bool {
	for _, t := range m.by {
		if rb, ok := t.(RunBatcher); ok && rb.BatchesRun() {
			return true
		}
	}
	return false
}

// Prepare hands each cell that batches its cases (Batcher).
func (m *Matrix) Prepare(ctx context.Context, cases []*Case) error {
	byCell := map[Target][]*Case{}
	for _, c := range cases {
		if t, _ := m.cell(c); t != nil {
			byCell[t] = append(byCell[t], c)
		}
	}
	errs := make([]error, len(m.cells))
	var wg sync.WaitGroup
	for i, r := range m.cells {
		t := m.by[r]
		b, ok := t.(Batcher)
		if !ok || len(byCell[t]) == 0 {
			continue
		}
		prepare := func() {
			if err := b.Prepare(ctx, byCell[t]); err != nil {
				errs[i] = fmt.Errorf("cell %s x %s: %w", r.APIServer, r.Kubelet, err)
			}
		}
		if !m.parallel {
			if prepare(); errs[i] != nil {
				return errs[i]
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			prepare()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close closes what the cells share.
func (m *Matrix) Close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

var (
	_ Batcher = (*Matrix)(nil)
	_ Router  = (*Matrix)(nil)
)
