//go:build tools

// Package volperm pins the modules the packages use while they are being written.
package volperm

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "golang.org/x/sys/unix"
	_ "sigs.k8s.io/yaml"
	_ "k8s.io/apimachinery/pkg/util/validation/field"
	_ "k8s.io/apimachinery/pkg/api/resource"
)
