// Package incluster runs volperm itself in the cluster under test (volperm cluster run
// --in-cluster, docs/certify.md "In the cluster"): a Job whose pod runs `volperm runner` from
// the runner image (framework/probe/image WithRunner) with the RBAC of manifests/in-cluster.yaml,
// so that a run lasts as long as it needs without the client that started it; Retrieve later
// waits for its results, copies them out of the pod, lets the pod end and deletes everything
// Start made.
package incluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/manifests"
)

const (
	// Namespace holds the run's Job; it is manifests/in-cluster.yaml's.
	Namespace = "volperm-run"
	// JobName is the run's Job: one in-cluster run per cluster at a time.
	JobName = "volperm"
	// container is the Job's container; ResultsDir its results dir (RESULTS_DIR), an emptyDir.
	container  = "volperm"
	ResultsDir = "/results"
	// serviceAccount is manifests/in-cluster.yaml's.
	serviceAccount = "volperm"
	// DefaultHold is how long the run's pod keeps its results for Retrieve after the run.
	DefaultHold = 24 * time.Hour
	// ExitNotDone is `volperm runner --fetch`'s exit code while the run has not finished.
	ExitNotDone = 3
)

// Runner's flags (cmd/volperm runner.go) that Start and Retrieve use.
const (
	FlagHold    = "hold"
	FlagFetch   = "fetch"
	FlagRelease = "release"
)

// Options are an in-cluster run's.
type Options struct {
	Config *rest.Config
	Client kubernetes.Interface
	// Image is the runner image; it must be on the nodes (the pods never pull it).
	Image string
	// Args are `volperm runner` flags (after --probe-image Image and --hold Hold).
	Args []string
	// Env is more of the runner's environment (E2E_FOCUS, E2E_SKIP, E2E_PARALLEL).
	Env map[string]string
	// APIServer, "host:port", is where the run reaches the apiserver instead of the kubernetes
	// Service's cluster IP (APIServerEndpoint): for a cluster without kube-proxy, such as the
	// kind clusters volperm makes offline.
	APIServer string
	// Hold is how long the pod keeps its results after the run (DefaultHold when 0).
	Hold time.Duration
	Log  io.Writer
}

func (o Options) logf(format string, a ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "in-cluster: "+format+"\n", a...)
	}
}

var labels = map[string]string{"app.kubernetes.io/name": "volperm"}

// Start makes the namespace, RBAC and Job of a run and returns once the Job exists: the run goes
// on in the cluster. A run already there (not retrieved yet) is refused; what Start made before
// failing is removed.
func Start(ctx context.Context, o Options) error {
	if o.Image == "" {
		return errors.New("no runner image: build one with volperm cluster image --runner and put it on the nodes")
	}
	if _, err := o.Client.BatchV1().Jobs(Namespace).Get(ctx, JobName, metav1.GetOptions{}); err == nil {
		return fmt.Errorf("a run is in the cluster already (job %s/%s): volperm cluster retrieve fetches its results and removes it", Namespace, JobName)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("look for a run in the cluster: %w", err)
	}
	if err := waitNamespaceGone(ctx, o.Client); err != nil {
		return err
	}
	err := apply(ctx, o.Client)
	if err == nil {
		_, err = o.Client.BatchV1().Jobs(Namespace).Create(ctx, job(o), metav1.CreateOptions{})
	}
	if err != nil {
		if rerr := Remove(context.WithoutCancel(ctx), o); rerr != nil {
			o.logf("remove after a failed start: %v", rerr)
		}
		return fmt.Errorf("start the in-cluster run: %w", err)
	}
	o.logf("job %s/%s started with %s", Namespace, JobName, o.Image)
	return nil
}

// objects are manifests/in-cluster.yaml's.
func objects() ([]runtime.Object, error) {
	var out []runtime.Object
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests.InCluster), 4096)
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("manifests/in-cluster.yaml: %w", err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("manifests/in-cluster.yaml: %w", err)
		}
		out = append(out, obj)
	}
}

// apply creates manifests/in-cluster.yaml's objects; a ClusterRole or binding that is there
// already (a run removed by hand, halfway) is replaced.
func apply(ctx context.Context, c kubernetes.Interface) error {
	objs, err := objects()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = c.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			if _, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				_, err = c.RbacV1().ClusterRoles().Update(ctx, o, metav1.UpdateOptions{})
			}
		case *rbacv1.ClusterRoleBinding:
			if _, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
				_, err = c.RbacV1().ClusterRoleBindings().Update(ctx, o, metav1.UpdateOptions{})
			}
		default:
			err = fmt.Errorf("manifests/in-cluster.yaml: a %T is not expected", obj)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// job is the run's Job: one pod, never restarted, `volperm runner` with the results in an
// emptyDir, kept for Retrieve (--hold).
func job(o Options) *batchv1.Job {
	hold := o.Hold
	if hold <= 0 {
		hold = DefaultHold
	}
	zero, no := int32(0), false
	args := append([]string{"runner", "--probe-image", o.Image, "--" + FlagHold, hold.String()}, o.Args...)
	env := []corev1.EnvVar{{Name: "RESULTS_DIR", Value: ResultsDir}}
	if host, port, err := net.SplitHostPort(o.APIServer); err == nil {
		// client-go's in-cluster configuration reads these two (rest.InClusterConfig).
		env = append(env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: host}, corev1.EnvVar{Name: "KUBERNETES_SERVICE_PORT", Value: port})
	}
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		env = append(env, corev1.EnvVar{Name: k, Value: o.Env[k]})
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName, Namespace: Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: serviceAccount,
					RestartPolicy:      corev1.RestartPolicyNever,
					EnableServiceLinks: &no,
					// A cluster of one node (kind's) has only the control plane.
					Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{
						Name:            container,
						Image:           o.Image,
						ImagePullPolicy: corev1.PullNever,
						Args:            args,
						Env:             env,
						VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}},
					}},
					Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
}

// APIServerEndpoint is the address of an apiserver behind the kubernetes Service (its
// EndpointSlice), "host:port", for Options.APIServer.
func APIServerEndpoint(ctx context.Context, c kubernetes.Interface) (string, error) {
	slices, err := c.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return "", fmt.Errorf("the kubernetes Service's endpoints: %w", err)
	}
	for _, s := range slices.Items {
		for _, p := range s.Ports {
			if p.Port == nil {
				continue
			}
			for _, e := range s.Endpoints {
				if len(e.Addresses) > 0 {
					return net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*p.Port))), nil
				}
			}
		}
	}
	return "", errors.New("the kubernetes Service has no endpoint")
}

// Result is what Retrieve fetched.
type Result struct {
	// Files are the result files written into the report dir.
	Files []string
	// Passed is the run's verdict (summary.json's result).
	Passed bool
}

// Retrieve waits up to wait for the run's results, copies them (e2e.tar.gz unpacked) into dir,
// lets the pod end and removes everything Start made. A run that has not finished within wait
// stays, to be retrieved later.
func Retrieve(ctx context.Context, o Options, dir string, wait time.Duration) (Result, error) {
	if _, err := o.Client.BatchV1().Jobs(Namespace).Get(ctx, JobName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return Result{}, errors.New("no in-cluster run in this cluster: volperm cluster run --in-cluster starts one")
	} else if err != nil {
		return Result{}, fmt.Errorf("look for the in-cluster run: %w", err)
	}
	tarball, pod, err := fetch(ctx, o, wait)
	if err != nil {
		return Result{}, err
	}
	res, err := unpack(tarball, dir)
	if err != nil {
		return Result{}, fmt.Errorf("the run's results: %w (the run stays in the cluster: retrieve again)", err)
	}
	if _, err := cluster.Exec(ctx, o.Config, o.Client, Namespace, pod, container, []string{"/volperm", "runner", "--" + FlagRelease}, nil); err != nil {
		o.logf("release pod %s: %v", pod, err)
	}
	if err := Remove(ctx, o); err != nil {
		return res, fmt.Errorf("results fetched into %s, but: %w", dir, err)
	}
	return res, nil
}

// fetch waits until the run's pod answers `volperm runner --fetch` with its tarball.
func fetch(ctx context.Context, o Options, wait time.Duration) ([]byte, string, error) {
	deadline := time.Now().Add(wait)
	var said string
	for {
		pod, why, err := runPod(ctx, o.Client)
		if err != nil {
			return nil, "", err
		}
		if pod != "" {
			out, err := cluster.Exec(ctx, o.Config, o.Client, Namespace, pod, container, []string{"/volperm", "runner", "--" + FlagFetch}, nil)
			var code utilexec.CodeExitError
			switch {
			case err == nil:
				return out, pod, nil
			case errors.As(err, &code) && code.Code == ExitNotDone:
				why = "pod " + pod + " is running the catalogue"
			default:
				return nil, "", fmt.Errorf("fetch the results from pod %s: %w", pod, err)
			}
		}
		if why != said {
			o.logf("waiting: %s", why)
			said = why
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("the run has not finished within %s (%s): retrieve again later", wait, why)
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// runPod is the run's running pod ("" with why while there is none yet); a pod that ended or
// cannot start is an error with its reason.
func runPod(ctx context.Context, c kubernetes.Interface) (string, string, error) {
	pods, err := c.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + JobName})
	if err != nil {
		return "", "", fmt.Errorf("list the run's pods: %w", err)
	}
	if len(pods.Items) == 0 {
		return "", "the job has no pod yet", nil
	}
	p := pods.Items[0]
	switch p.Status.Phase {
	case corev1.PodRunning:
		return p.Name, "", nil
	case corev1.PodSucceeded, corev1.PodFailed:
		return "", "", fmt.Errorf("the run's pod %s ended (%s) before its results were fetched (its hold ran out, or it failed: kubectl logs -n %s %s); volperm cluster remove deletes it", p.Name, p.Status.Phase, Namespace, p.Name)
	}
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && (w.Reason == "ErrImageNeverPull" || w.Reason == "InvalidImageName" || w.Reason == "CreateContainerConfigError") {
			return "", "", fmt.Errorf("the run's pod %s cannot start on node %s: %s: %s (the runner image must be on every node: volperm cluster run --in-cluster --kind-cluster NAME loads it into a kind cluster)", p.Name, p.Spec.NodeName, w.Reason, w.Message)
		}
	}
	return "", "pod " + p.Name + " is " + strings.ToLower(string(p.Status.Phase)), nil
}

// unpack writes the gzipped tarball's regular files into dir and reads the verdict from its
// summary.json.
func unpack(tarball []byte, dir string) (Result, error) {
	gz, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, err
	}
	var res Result
	var summary, log []byte
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, err
		}
		name := filepath.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			return Result{}, fmt.Errorf("unexpected entry %q", h.Name)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return Result{}, err
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return Result{}, err
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			return Result{}, err
		}
		res.Files = append(res.Files, name)
		switch name {
		case "summary.json":
			summary = body
		case "e2e.log":
			log = body
		}
	}
	if summary == nil {
		return res, fmt.Errorf("no summary.json among them: the run could not start; e2e.log ends: %s", lastLines(log, 5))
	}
	var s struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal(summary, &s); err != nil {
		return Result{}, fmt.Errorf("summary.json: %w", err)
	}
	res.Passed = s.Result == "passed"
	return res, nil
}

// lastLines is the last n non-empty lines of log, joined by " | ".
func lastLines(log []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(log), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// Remove deletes everything Start made: the Job and its pod, then manifests/in-cluster.yaml's
// objects (in reverse order); it waits until the namespace is gone.
func Remove(ctx context.Context, o Options) error {
	bg := metav1.DeletePropagationBackground
	var errs []error
	del := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", what, err))
		}
	}
	del("job", o.Client.BatchV1().Jobs(Namespace).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: &bg}))
	objs, err := objects()
	if err != nil {
		return err
	}
	for _, obj := range slices.Backward(objs) {
		opts := metav1.DeleteOptions{}
		switch x := obj.(type) {
		case *corev1.Namespace:
			del("namespace "+x.Name, o.Client.CoreV1().Namespaces().Delete(ctx, x.Name, opts))
		case *corev1.ServiceAccount:
			del("serviceaccount "+x.Name, o.Client.CoreV1().ServiceAccounts(x.Namespace).Delete(ctx, x.Name, opts))
		case *rbacv1.ClusterRole:
			del("clusterrole "+x.Name, o.Client.RbacV1().ClusterRoles().Delete(ctx, x.Name, opts))
		case *rbacv1.ClusterRoleBinding:
			del("clusterrolebinding "+x.Name, o.Client.RbacV1().ClusterRoleBindings().Delete(ctx, x.Name, opts))
		}
	}
	if len(errs) == 0 {
		if err := waitNamespaceGone(ctx, o.Client); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitNamespaceGone waits up to two minutes for the namespace of a removed run to go.
func waitNamespaceGone(ctx context.Context, c kubernetes.Interface) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ns, err := c.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("namespace %s: %w", Namespace, err)
		}
		if ns.DeletionTimestamp == nil {
			return fmt.Errorf("namespace %s is there without a run (a run started halfway?): volperm cluster remove deletes it", Namespace)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s is still there after 2 min (a run's, being deleted)", Namespace)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
