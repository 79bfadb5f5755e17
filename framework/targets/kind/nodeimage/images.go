package nodeimage

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	probeimage "github.com/volperm/volperm/framework/probe/image"
)

// keyLabel is the Docker image label holding the key of the inputs an image was made from.
const keyLabel = "dev.volperm.key"

// entry is one file of an image's tree that is not taken from a directory on disk as it is.
type entry struct {
	path string // relative, no leading slash
	mode int64
	dir  bool
	link string // symlink target
	data []byte
	src  string // file to copy instead of data
}

// componentImage is a control-plane (or sandbox) image made of one static binary.
type componentImage struct {
	tag     string
	binary  string // path of the binary in the cache
	keyFrom string // step whose key identifies the binary
	changes []string
}

func (b *builder) componentImageList() []componentImage {
	var imgs []componentImage
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		imgs = append(imgs, componentImage{tag: "registry.k8s.io/" + c + ":" + b.release,
			binary: filepath.Join(b.kubeDir, c), keyFrom: "kubernetes"})
	}
	imgs = append(imgs,
		componentImage{tag: "registry.k8s.io/etcd:" + b.etcdTag, binary: filepath.Join(b.etcdDir, "etcd"), keyFrom: "etcd"},
		componentImage{tag: "registry.k8s.io/pause:" + b.pauseTag, binary: filepath.Join(b.cache, "pause", "pause"), keyFrom: "pause",
			changes: []string{`ENTRYPOINT ["/pause"]`}})
	return imgs
}

// componentImages imports each binary as an image holding it at /usr/local/bin (PATH) and, for
// pause, /pause: the static pods run `kube-apiserver ...`, `etcd ...` by name.
func (b *builder) componentImages(ctx context.Context) (bool, error) {
	cached := true
	for _, img := range b.componentImageList() {
		k, err := key(b.keys[img.keyFrom], img.tag, strings.Join(img.changes, ","))
		if err != nil {
			return false, err
		}
		if b.imageKey(ctx, img.tag) == k {
			continue
		}
		cached = false
		name := filepath.Base(img.binary)
		entries := []entry{
			{path: "tmp", dir: true, mode: 0o1777},
			{path: "usr", dir: true, mode: 0o755},
			{path: "usr/local", dir: true, mode: 0o755},
			{path: "usr/local/bin", dir: true, mode: 0o755},
			{path: "usr/local/bin/" + name, mode: 0o755, src: img.binary},
		}
		if name == "pause" {
			entries = append(entries, entry{path: "pause", mode: 0o755, src: img.binary})
		}
		changes := append([]string{"ENV PATH=/usr/local/bin:/usr/bin:/bin", "LABEL " + keyLabel + "=" + k}, img.changes...)
		b.logf("component-images: importing %s", img.tag)
		if err := b.dockerImport(ctx, img.tag, changes, "", entries); err != nil {
			return false, err
		}
	}
	return cached, nil
}

// imageKey is the key label of a local image, "" when the image does not exist.
func (b *builder) imageKey(ctx context.Context, tag string) string {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format",
		`{{index .Config.Labels "`+keyLabel+`"}}`, tag).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// imageID is the ID of a local image.
func (b *builder) imageID(ctx context.Context, tag string) (string, error) {
	out, err := b.output(ctx, "", "docker", "image", "inspect", "--format", "{{.Id}}", tag)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", tag, err)
	}
	return strings.TrimSpace(out), nil
}

// dockerImport streams a tar of the tree at root (if any) followed by entries into `docker import`.
// Entries replace what root holds at the same path.
func (b *builder) dockerImport(ctx context.Context, tag string, changes []string, root string, entries []entry) error {
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	args = append(args, "-", tag)
	cmd := exec.CommandContext(ctx, "docker", args...)
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("docker import %s: %w", tag, err)
	}
	werr := writeTar(pw, root, entries)
	pw.CloseWithError(werr)
	if err := cmd.Wait(); err != nil {
		if werr != nil {
			return fmt.Errorf("docker import %s: %w", tag, werr)
		}
		return fmt.Errorf("docker import %s: %w\n%s", tag, err, out.String())
	}
	return werr
}

// writeTar writes the tree at root (owners, modes, hard links and devices kept; names numeric),
// then entries.
func writeTar(w io.Writer, root string, entries []entry) error {
	tw := tar.NewWriter(w)
	replaced := map[string]bool{}
	for _, e := range entries {
		replaced[e.path] = true
	}
	mtime := time.Unix(0, 0)
	if root != "" {
		links := map[uint64]string{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil || rel == "." {
				return err
			}
			if replaced[rel] {
				if d.IsDir() {
					return fmt.Errorf("%s: a directory cannot be replaced", rel)
				}
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			link := ""
			if fi.Mode()&fs.ModeSymlink != 0 {
				if link, err = os.Readlink(p); err != nil {
					return err
				}
			}
			hdr, err := tar.FileInfoHeader(fi, link)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			hdr.Name = rel
			if fi.IsDir() {
				hdr.Name += "/"
			}
			hdr.Uname, hdr.Gname = "", ""
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode().IsRegular() && st.Nlink > 1 {
				if first, ok := links[st.Ino]; ok {
					hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				} else {
					links[st.Ino] = rel
				}
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if hdr.Typeflag == tar.TypeReg {
				return copyFile(tw, p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("tar %s: %w", root, err)
		}
	}
	for _, e := range entries {
		hdr := &tar.Header{Name: e.path, Mode: e.mode, ModTime: mtime, Typeflag: tar.TypeReg}
		switch {
		case e.dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.path+"/"
		case e.link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, e.link, 0o777
		case e.src != "":
			fi, err := os.Stat(e.src)
			if err != nil {
				return err
			}
			hdr.Size = fi.Size()
		default:
			hdr.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if e.src != "" {
			if err := copyFile(tw, e.src); err != nil {
				return err
			}
		} else if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// nodeEntries is what the node image adds to the rootfs: kind's base image files
// (images/base/Dockerfile COPY lines and RUN steps), the Kubernetes commands, the CNI
// configuration and the files `kind build node-image` writes.
func (b *builder) nodeEntries(ctx context.Context) ([]entry, error) {
	var es []entry
	dirs := map[string]bool{}
	addDir := func(p string) {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	add := func(e entry) {
		addDir(e.path)
		es = append(es, e)
	}
	files := filepath.Join(b.kindDir, "images", "base", "files")
	err := filepath.WalkDir(files, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(files, p)
		mode := int64(0o644) // Dockerfile: COPY --chmod=0644 ...
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755 // COPY --chmod=0755 files/usr/local/bin/* and files/kind/bin/
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "etc/containerd/config.toml" {
			// kind build node-image writes the sandbox image it preloads into the config.
			data = bytes.Replace(data, []byte(`sandbox_image = "registry.k8s.io/pause:3.10"`),
				[]byte(`sandbox_image = "registry.k8s.io/pause:`+b.pauseTag+`"`), 1)
			if !bytes.Contains(data, []byte(`registry.k8s.io/pause:`+b.pauseTag+`"`)) {
				return fmt.Errorf("%s: no sandbox_image line to set", p)
			}
		}
		add(entry{path: rel, mode: mode, data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kind base files: %w", err)
	}
	// Dockerfile: systemctl enable kubelet containerd undo-mount-hacks; mask systemd-binfmt.
	for _, s := range []string{"kubelet", "containerd", "undo-mount-hacks"} {
		add(entry{path: "etc/systemd/system/multi-user.target.wants/" + s + ".service", link: "/etc/systemd/system/" + s + ".service"})
	}
	add(entry{path: "etc/systemd/system/systemd-binfmt.service", link: "/dev/null"})
	add(entry{path: "etc/kubernetes/manifests", dir: true, mode: 0o755})
	add(entry{path: "usr/sbin/init", link: "/usr/lib/systemd/systemd"})
	if b.runtime == RuntimeDebian {
		// kind's units and crictl name the binaries it builds into /usr/local; Debian's are in /usr.
		for _, c := range []string{"containerd", "ctr", "containerd-shim-runc-v2"} {
			add(entry{path: "usr/local/bin/" + c, link: "/usr/bin/" + c})
		}
	} else {
		for _, c := range RuntimeCommands {
			add(entry{path: c.Path, mode: 0o755, src: filepath.Join(b.runtimeDir, c.Name)})
		}
	}
	add(entry{path: "opt/cni/bin", link: "/usr/lib/cni"})
	add(entry{path: "etc/cni/net.d/10-bridge.conflist", mode: 0o644, data: []byte(bridgeConflist)})
	spec, err := b.criBaseSpec(ctx)
	if err != nil {
		return nil, err
	}
	add(entry{path: "etc/containerd/cri-base.json", mode: 0o644, data: spec})
	for _, c := range []string{"kubeadm", "kubelet", "kubectl"} {
		add(entry{path: "usr/bin/" + c, mode: 0o755, src: filepath.Join(b.kubeDir, c)})
	}
	add(entry{path: "kind/version", mode: 0o644, data: []byte(b.release + "\n")})
	add(entry{path: "kind/manifests/default-storage.yaml", mode: 0o644, data: []byte(defaultStorage)})
	add(entry{path: "kind/manifests/default-cni.yaml", mode: 0o644, data: []byte("# volperm: clusters set networking.disableDefaultCNI; the bridge conflist is in /etc/cni/net.d\n")})
	// Directories first (parents before children), with the modes the Dockerfile gives them.
	var ds []string
	for d := range dirs {
		if _, err := os.Lstat(filepath.Join(b.rootfsDir, d)); err != nil {
			ds = append(ds, d)
		}
	}
	sort.Strings(ds)
	var out []entry
	for _, d := range ds {
		out = append(out, entry{path: d, dir: true, mode: 0o755})
	}
	return append(out, es...), nil
}

// criBaseSpec is kind's /etc/containerd/cri-base.json: `ctr oci spec` of the node's containerd
// with the mount-product-files hook added and rlimits removed (images/base/Dockerfile). Debian's
// ctr runs in its rootfs; RuntimeContainerd2's is static and runs as it is.
func (b *builder) criBaseSpec(ctx context.Context) ([]byte, error) {
	cmd := []string{"chroot", b.rootfsDir, "ctr"}
	if b.runtime != RuntimeDebian {
		cmd = []string{filepath.Join(b.runtimeDir, "ctr")}
	}
	raw, err := b.output(ctx, "", cmd[0], append(cmd[1:], "oci", "spec")...)
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return nil, fmt.Errorf("ctr oci spec: %w", err)
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	cc, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(cc, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	spec["hooks"] = hooks
	if p, ok := spec["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	return json.MarshalIndent(spec, "", "  ")
}

// bridgeConflist is the node's CNI: clusters disable kind's default CNI (kindnet, an image not
// built here); pods of a single node need only a bridge, on kind's default pod subnet.
const bridgeConflist = `{
  "cniVersion": "1.0.0",
  "name": "volperm-bridge",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "10.244.0.0/24"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// defaultStorage is kind's fallback StorageClass (installstorage.defaultStorageManifest).
const defaultStorage = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  namespace: kube-system
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
`

// nodeBase imports rootfs + nodeEntries as the node image without preloaded images.
func (b *builder) nodeBase(ctx context.Context) (bool, error) {
	entries, err := b.nodeEntries(ctx)
	if err != nil {
		return false, err
	}
	h := []string{b.keys["rootfs"], b.keys["runtime"], b.keys["kubernetes"], KindVersion}
	for _, e := range entries {
		h = append(h, e.path, fmt.Sprint(e.mode, e.dir), e.link, string(e.data), e.src)
	}
	k, err := key(h...)
	if err != nil {
		return false, err
	}
	b.keys["node-base"] = k
	tag := "volperm/kindnode-base:" + b.tagPrefix() + k[:12]
	b.result.Image = tag
	if b.imageKey(ctx, tag) == k {
		return true, nil
	}
	b.logf("node-base: importing %s", tag)
	changes := []string{"ENV container=docker", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`, "LABEL " + keyLabel + "=" + k}
	return false, b.dockerImport(ctx, tag, changes, b.rootfsDir, entries)
}

// preload imports the component images (and Options.Preload) into the node's containerd the way
// `kind build node-image` does: run the node image with containerd only, `ctr images import`,
// `docker commit`.
func (b *builder) preload(ctx context.Context) (bool, error) {
	base := b.result.Image
	var tags []string
	for _, img := range b.componentImageList() {
		tags = append(tags, img.tag)
	}
	tags = append(tags, b.opts.Preload...)
	h := []string{b.keys["node-base"]}
	for _, t := range append([]string{base}, tags...) {
		id, err := b.imageID(ctx, t)
		if err != nil {
			return false, err
		}
		h = append(h, t, id)
	}
	k, err := key(h...)
	if err != nil {
		return false, err
	}
	tag := "volperm/kindnode:" + b.tagPrefix() + k[:12]
	b.result.Image = tag
	if b.imageKey(ctx, tag) == k {
		return true, nil
	}
	name := "volperm-kindnode-preload-" + k[:12]
	_ = exec.Command("docker", "rm", "-f", name).Run() // a leftover of an interrupted preload of this key
	if err := b.run(ctx, "", nil, "docker", "run", "-d", "--privileged", "--name", name, "--entrypoint", "sleep", base, "infinity"); err != nil {
		return false, err
	}
	defer exec.Command("docker", "rm", "-f", name).Run()
	if err := b.run(ctx, "", nil, "docker", "exec", name, "sh", "-c", "nohup containerd >/tmp/containerd.log 2>&1 &"); err != nil {
		return false, err
	}
	ready := false
	for i := 0; i < 60 && !ready; i++ {
		ready = exec.CommandContext(ctx, "docker", "exec", name, "ctr", "version").Run() == nil
		if !ready {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if !ready {
		return false, fmt.Errorf("containerd in %s did not answer within 30 s", name)
	}
	for _, t := range tags {
		b.logf("preload: %s", t)
		save := exec.CommandContext(ctx, "docker", "save", t)
		imp := exec.CommandContext(ctx, "docker", "exec", "-i", name, "ctr", "-n", "k8s.io", "images", "import",
			"--all-platforms", "--no-unpack", "--digests", "-")
		pipe, err := save.StdoutPipe()
		if err != nil {
			return false, err
		}
		imp.Stdin = pipe
		var serr, ierr bytes.Buffer
		save.Stderr, imp.Stdout, imp.Stderr = &serr, &ierr, &ierr
		if err := save.Start(); err != nil {
			return false, err
		}
		if err := imp.Run(); err != nil {
			// An image removed from the engine since the build began (by another run) makes
			// docker save fail and the import read nothing: say that, not the import's error.
			if werr := save.Wait(); werr != nil {
				return false, fmt.Errorf("docker save %s: %w: %s (was it removed from the engine while the node image was built? run again)", t, werr, strings.TrimSpace(serr.String()))
			}
			return false, fmt.Errorf("ctr images import %s: %w\n%s", t, err, ierr.String())
		}
		if err := save.Wait(); err != nil {
			return false, fmt.Errorf("docker save %s: %w\n%s", t, err, serr.String())
		}
	}
	// containerd's metadata must be on disk before the commit. sleep, PID 1, reaps nothing:
	// containerd stays a zombie once it has exited.
	if err := b.run(ctx, "", nil, "docker", "exec", name, "sh", "-c", "pkill -x containerd; while ps -o stat= -C containerd | grep -qv Z; do sleep 0.1; done"); err != nil {
		return false, err
	}
	return false, b.run(ctx, "", nil, "docker", "commit",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`, "--change", `CMD []`,
		"--change", "LABEL "+keyLabel+"="+k, name, tag)
}

// tagPrefix begins the tags of the node images of this release and runtime: RELEASE-RUNTIME-,
// followed by the first 12 digits of the image's key.
func (b *builder) tagPrefix() string { return b.release + "-" + b.runtime + "-" }

// prune removes the node images of this release and runtime this builder made from other inputs
// (other tags RELEASE-RUNTIME-KEY of volperm/kindnode and volperm/kindnode-base carrying
// keyLabel); the images of other releases and runtimes stay, and so do those tagged
// RELEASE-KEY, as they were before there were runtimes (docker rmi removes them). An image a
// container still uses stays.
func (b *builder) prune(ctx context.Context) (bool, error) {
	out, err := b.output(ctx, "", "docker", "images", "--filter", "label="+keyLabel, "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return false, err
	}
	keep := map[string]bool{b.result.Image: true, "volperm/kindnode-base:" + b.tagPrefix() + b.keys["node-base"][:12]: true}
	cached := true
	for _, img := range strings.Fields(out) {
		repo, tag, _ := strings.Cut(img, ":")
		if keep[img] || (repo != "volperm/kindnode" && repo != "volperm/kindnode-base") || !strings.HasPrefix(tag, b.tagPrefix()) {
			continue
		}
		cached = false
		if err := b.run(ctx, "", nil, "docker", "rmi", img); err != nil {
			b.logf("prune: %s stays: %v", img, err)
		} else {
			b.logf("prune: removed %s", img)
		}
	}
	return cached, nil
}

// jsonField reads one string field of a JSON object.
func jsonField(doc, field string) string {
	var m map[string]any
	if json.Unmarshal([]byte(doc), &m) != nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}

// BuildProbeImage builds the probe image (framework/probe/image) of the volperm module at
// repoRoot and imports it with `docker import`, unless the engine has it; it returns its tag.
func BuildProbeImage(ctx context.Context, opts Options, repoRoot string) (string, error) {
	img, err := probeimage.Build(ctx, repoRoot)
	if err != nil {
		return "", fmt.Errorf("probe binary: %w", err)
	}
	return importImage(ctx, opts, img)
}

// BuildRunnerImage builds the runner image (framework/probe/image WithRunner: the probe and
// volperm) of the volperm module at repoRoot and imports it, unless the engine has it; it
// returns its tag.
func BuildRunnerImage(ctx context.Context, opts Options, repoRoot string) (string, error) {
	img, err := probeimage.BuildRunner(ctx, repoRoot)
	if err != nil {
		return "", fmt.Errorf("runner image: %w", err)
	}
	return importImage(ctx, opts, img)
}

// importImage imports img with `docker import` unless the engine has it and removes the
// engine's older tags of its repository (probeimage.Ensure, the one importer), and returns its
// tag.
func importImage(ctx context.Context, opts Options, img probeimage.Image) (string, error) {
	b := &builder{opts: opts}
	if b.opts.Log == nil {
		b.opts.Log = os.Stderr
	}
	imported, removed, err := probeimage.Ensure(ctx, probeimage.CLI{}, img)
	if err != nil {
		return "", err
	}
	if imported {
		b.logf("image: imported %s", img.Tag)
	}
	for _, tag := range removed {
		b.logf("image: removed %s (an older build)", tag)
	}
	return img.Tag, nil
}
