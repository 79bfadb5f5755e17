package incluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// manifests/in-cluster.yaml holds the namespace the Job goes in, its service account and the
// RBAC the cluster target needs, bound to that account.
func TestObjects(t *testing.T) {
	objs, err := objects()
	if err != nil {
		t.Fatal(err)
	}
	var ns *corev1.Namespace
	var sa *corev1.ServiceAccount
	var role *rbacv1.ClusterRole
	var binding *rbacv1.ClusterRoleBinding
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			ns = o
		case *corev1.ServiceAccount:
			sa = o
		case *rbacv1.ClusterRole:
			role = o
		case *rbacv1.ClusterRoleBinding:
			binding = o
		}
	}
	if len(objs) != 4 || ns == nil || sa == nil || role == nil || binding == nil {
		t.Fatalf("objects %d: want a Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding", len(objs))
	}
	if ns.Name != Namespace || sa.Namespace != Namespace || sa.Name != serviceAccount {
		t.Errorf("namespace %s, service account %s/%s: want %s, %s/%s", ns.Name, sa.Namespace, sa.Name, Namespace, Namespace, serviceAccount)
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != serviceAccount || binding.Subjects[0].Namespace != Namespace {
		t.Errorf("binding %+v does not bind %s to %s/%s", binding, role.Name, Namespace, serviceAccount)
	}
	// What the cluster target does (framework/cluster): exec into probe pods, read the kubelets
	// through the node proxy, bind the flexVolume allowlist's policy, read the apiserver's gates.
	for _, want := range []struct{ group, resource, verb string }{
		{"", "pods", "create"}, {"", "pods/exec", "create"}, {"", "namespaces", "delete"}, {"", "nodes/proxy", "get"},
		{"", "events", "list"}, {"", "persistentvolumes", "create"}, {"", "secrets", "create"},
		{"admissionregistration.k8s.io", "validatingadmissionpolicybindings", "create"},
		{"", "/metrics", "get"}, {"", "/readyz", "get"}, {"", "/version", "get"},
	} {
		if !allows(role, want.group, want.resource, want.verb) {
			t.Errorf("the ClusterRole does not allow %s %s/%s", want.verb, want.group, want.resource)
		}
	}
}

func allows(r *rbacv1.ClusterRole, group, resource, verb string) bool {
	for _, rule := range r.Rules {
		if !slices.Contains(rule.Verbs, verb) {
			continue
		}
		if strings.HasPrefix(resource, "/") {
			if slices.Contains(rule.NonResourceURLs, resource) {
				return true
			}
			continue
		}
		if slices.Contains(rule.APIGroups, group) && slices.Contains(rule.Resources, resource) {
			return true
		}
	}
	return false
}

// The Job: one pod, never restarted or pulled, `volperm runner` holding its results in an
// emptyDir, the probe pods on the same image, the environment sorted.
func TestJob(t *testing.T) {
	j := job(Options{Image: "volperm/volperm:abc", Args: []string{"--profile", "conformance"}, Env: map[string]string{"E2E_SKIP": "x", "E2E_FOCUS": "y"}, APIServer: "172.18.0.2:6443"})
	if *j.Spec.BackoffLimit != 0 || j.Namespace != Namespace || j.Name != JobName {
		t.Errorf("job %s/%s backoffLimit %d", j.Namespace, j.Name, *j.Spec.BackoffLimit)
	}
	p := j.Spec.Template.Spec
	c := p.Containers[0]
	want := []string{"runner", "--probe-image", "volperm/volperm:abc", "--hold", DefaultHold.String(), "--profile", "conformance"}
	if !slices.Equal(c.Args, want) || c.ImagePullPolicy != corev1.PullNever || c.Image != "volperm/volperm:abc" {
		t.Errorf("container args %q pull %s image %s; want %q, Never", c.Args, c.ImagePullPolicy, c.Image, want)
	}
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if !slices.Equal(env, []string{"RESULTS_DIR=" + ResultsDir, "KUBERNETES_SERVICE_HOST=172.18.0.2", "KUBERNETES_SERVICE_PORT=6443", "E2E_FOCUS=y", "E2E_SKIP=x"}) {
		t.Errorf("env %q", env)
	}
	if p.RestartPolicy != corev1.RestartPolicyNever || p.ServiceAccountName != serviceAccount || p.Volumes[0].EmptyDir == nil || c.VolumeMounts[0].MountPath != ResultsDir {
		t.Errorf("pod spec %+v", p)
	}
}

func tarball(t *testing.T, files map[string]string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// unpack writes the results and reads the verdict; an entry outside the report dir, or results
// without a summary, are refused.
func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	res, err := unpack(tarball(t, map[string]string{"summary.json": `{"result":"passed"}`, "junit_01.xml": "<testsuites/>"}), dir)
	if err != nil || !res.Passed || len(res.Files) != 2 {
		t.Fatalf("unpack = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "junit_01.xml")); string(b) != "<testsuites/>" {
		t.Errorf("junit_01.xml = %q", b)
	}
	if res, err := unpack(tarball(t, map[string]string{"summary.json": `{"result":"failed"}`}), t.TempDir()); err != nil || res.Passed {
		t.Errorf("a failed run: %+v, %v", res, err)
	}
	if _, err := unpack(tarball(t, map[string]string{"../escape": "x", "summary.json": "{}"}), t.TempDir()); err == nil {
		t.Error("an entry outside the report dir was written")
	}
	if _, err := unpack(tarball(t, map[string]string{"e2e.log": "volperm run: could not start\n"}), t.TempDir()); err == nil || !strings.Contains(err.Error(), "summary.json") || !strings.Contains(err.Error(), "volperm run: could not start") {
		t.Errorf("results without a summary: %v", err)
	}
}

// Start refuses a second run and makes everything; Remove deletes everything Start made.
func TestStartAndRemove(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset()
	o := Options{Client: c, Image: "volperm/volperm:abc"}
	if err := Start(ctx, o); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs(Namespace).Get(ctx, JobName, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Start(ctx, o); err == nil || !strings.Contains(err.Error(), "volperm cluster retrieve") {
		t.Errorf("a second start: %v", err)
	}
	if err := Remove(ctx, o); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"job":       func() error { _, err := c.BatchV1().Jobs(Namespace).Get(ctx, JobName, metav1.GetOptions{}); return err }(),
		"namespace": func() error { _, err := c.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{}); return err }(),
		"clusterrole": func() error {
			_, err := c.RbacV1().ClusterRoles().Get(ctx, "volperm-run", metav1.GetOptions{})
			return err
		}(),
		"clusterrolebinding": func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Get(ctx, "volperm-run", metav1.GetOptions{})
			return err
		}(),
	} {
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s after Remove: %v", what, err)
		}
	}
	if err := Start(ctx, Options{Client: c}); err == nil || !strings.Contains(err.Error(), "runner image") {
		t.Errorf("start without an image: %v", err)
	}
	var _ = batchv1.Job{}
}
