package nodeimage

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/volperm/volperm/framework/k8srelease"
)

// A node image of another release than KubernetesVersion (Options.Release) is built the way
// kind builds one from a release: that release's commands (a module generated per release,
// k8srelease.ReleaseModule, every dependency at the version the release selects), the etcd and
// pause images its kubeadm pulls (`kubeadm config images list`), the rest (rootfs, kind's files,
// pause program) shared with every release. docs/releases.md "Node images of other releases".

// releaseModule makes (cached) the module the release's commands are built in; the default
// release's is build/kindnode.
func (b *builder) releaseModule(ctx context.Context) (bool, error) {
	if b.release == KubernetesVersion {
		b.kubeModule = b.module
		return true, nil
	}
	goLine, err := b.goLine()
	if err != nil {
		return false, err
	}
	var imports []string
	for _, c := range KubernetesCommands {
		imports = append(imports, "k8s.io/kubernetes/cmd/"+c)
	}
	name := "module-" + b.release
	k, err := key(b.release, goLine, strings.Join(imports, ","))
	if err != nil {
		return false, err
	}
	b.kubeModule = filepath.Join(b.cache, name)
	return b.cachedDir(name, k, func(dir string) error {
		return k8srelease.ReleaseModule(ctx, b.release, dir, "volperm.dev/kindnode-"+b.release, goLine, imports, b.opts.Log)
	})
}

// goLine is build/kindnode's go directive, which generated modules share.
func (b *builder) goLine() (string, error) {
	return k8srelease.GoDirective(filepath.Join(b.module, "go.mod"))
}

// kubeadmImages asks the release's kubeadm which etcd and pause images it pulls: the tags the
// image must hold (cmd/kubeadm/app/constants: SupportedEtcdVersion, PauseVersion).
func (b *builder) kubeadmImages(ctx context.Context) (bool, error) {
	out, err := b.output(ctx, "", filepath.Join(b.kubeDir, "kubeadm"), "config", "images", "list", "--kubernetes-version", b.release)
	if err != nil {
		return false, err
	}
	b.etcdTag, b.pauseTag, err = parseImageList(out)
	if err != nil {
		return false, fmt.Errorf("kubeadm %s config images list: %w", b.release, err)
	}
	b.logf("kubeadm-images: etcd %s, pause %s", b.etcdTag, b.pauseTag)
	return true, nil
}

// parseImageList reads the etcd and pause tags from `kubeadm config images list`.
func parseImageList(out string) (etcd, pause string, err error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		img := strings.TrimSpace(sc.Text())
		if t, ok := strings.CutPrefix(img, "registry.k8s.io/etcd:"); ok {
			etcd = t
		}
		if t, ok := strings.CutPrefix(img, "registry.k8s.io/pause:"); ok {
			pause = t
		}
	}
	if etcd == "" || pause == "" {
		return "", "", fmt.Errorf("no registry.k8s.io/etcd or registry.k8s.io/pause in %q", out)
	}
	if etcdVersion(etcd) == "" {
		return "", "", fmt.Errorf("etcd tag %q is not X.Y.Z-N", etcd)
	}
	return etcd, pause, nil
}

var etcdTagRE = regexp.MustCompile(`^(\d+\.\d+\.\d+)-\d+$`)

// etcdVersion is the go.etcd.io/etcd/server/v3 version of an etcd image tag ("3.6.8-0" ->
// "v3.6.8"), "" when the tag is not one.
func etcdVersion(tag string) string {
	m := etcdTagRE.FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return "v" + m[1]
}

// etcd builds the etcd the release's kubeadm pulls: in build/kindnode when that module requires
// it (the default release's), else in a module of its own requiring that version.
func (b *builder) etcd(ctx context.Context) (bool, error) {
	want := etcdVersion(b.etcdTag)
	mod, err := os.ReadFile(filepath.Join(b.module, "go.mod"))
	if err != nil {
		return false, err
	}
	if regexp.MustCompile(`(?m)^\s*go\.etcd\.io/etcd/server/v3 ` + regexp.QuoteMeta(want) + `\s*$`).Match(mod) {
		k, err := b.moduleKey(b.module, "etcd")
		if err != nil {
			return false, err
		}
		b.etcdDir = filepath.Join(b.cache, "etcd")
		return b.cachedDir("etcd", k, func(dir string) error {
			return b.goBuild(ctx, b.module, filepath.Join(dir, "etcd"), "-s -w", "go.etcd.io/etcd/server/v3")
		})
	}
	goLine, err := b.goLine()
	if err != nil {
		return false, err
	}
	k, err := key(b.goVersion, goLine, want)
	if err != nil {
		return false, err
	}
	name := "etcd-" + want
	b.etcdDir = filepath.Join(b.cache, name)
	cached, err := b.cachedDir(name, k, func(dir string) error {
		m := filepath.Join(dir, "module")
		if err := os.MkdirAll(m, 0o755); err != nil {
			return err
		}
		if err := k8srelease.ToolsModule(ctx, m, "volperm.dev/kindnode-etcd", goLine, "go.etcd.io/etcd/server/v3 "+want, "",
			[]string{"go.etcd.io/etcd/server/v3"}, b.opts.Log); err != nil {
			return err
		}
		return b.goBuild(ctx, m, filepath.Join(dir, "etcd"), "-s -w", "go.etcd.io/etcd/server/v3")
	})
	b.keys["etcd"] = k
	return cached, err
}
