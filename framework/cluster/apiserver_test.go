package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// The admission half admits every case once in a namespace of its own, binds each allowlist
// once (a second case of the same allowlist shares its binding; a canary after each new one
// shows it in effect), labels the admitted object with its binding, hands the node the pod as
// stored, and removes its bindings and namespace at Close.
func TestAdmissionHalf(t *testing.T) {
	client := fake.NewClientset()
	var (
		mu       sync.Mutex
		canaries = map[string]bool{}
	)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if l := pod.Labels[PolicyLabel]; strings.Contains(l, "canary") {
			mu.Lock()
			canaries[l] = true
			mu.Unlock()
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
				errors.New("ValidatingAdmissionPolicy 'volperm-flexvolume-allowlist' with binding 'b' denied request: no volume type is allowed"))
		}
		return false, nil, nil
	})
	tg := &Target{opts: Options{Log: io.Discard, ProbeImage: "volperm/probe:test"}, client: client, admitClient: client,
		version: "v1.37.1", kubeletVersion: "v1.37.1",
		namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
	h := &apiserverHalf{t: tg}
	pod := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}
	}
	p1 := &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}}
	p2 := &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"flexVolume"}, AllowedDrivers: []string{"a/b"}}
	cases := []*framework.Case{
		{Name: "p1", Pod: pod(), FlexVolumePolicy: p1},
		{Name: "p1 again", Pod: pod(), FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"emptyDir"}}},
		{Name: "p2", Pod: pod(), FlexVolumePolicy: p2},
		{Name: "none", Pod: pod()},
	}
	var labels []string
	for _, c := range cases {
		a, err := h.Admit(context.Background(), c)
		if err != nil || !a.Admission.Allowed || a.Pod == nil {
			t.Fatalf("%s: %+v, %v", c.Name, a, err)
		}
		if a.Pod.Namespace != h.ns || a.Pod.Spec.Containers[0].Image != "volperm/probe:test" || *a.Pod.Spec.AutomountServiceAccountToken {
			t.Errorf("%s: the node gets the pod as admitted in the half's namespace %s with the probe image and no token: %+v", c.Name, h.ns, a.Pod)
		}
		labels = append(labels, a.Pod.Labels[PolicyLabel])
	}
	ns := h.ns
	if want := []string{ns + "-p0", ns + "-p0", ns + "-p1", ""}; !reflect.DeepEqual(labels, want) {
		t.Errorf("policy labels %q, want %q", labels, want)
	}
	if want := []string{ns + "-p0", ns + "-canary0", ns + "-p1", ns + "-canary1"}; !reflect.DeepEqual(h.made, want) {
		t.Errorf("bindings made %q, want %q", h.made, want)
	}
	if len(canaries) != 2 {
		t.Errorf("canaries %v, want one after each new binding", canaries)
	}
	nss, _ := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if len(nss.Items) != 1 {
		t.Errorf("%d namespaces, want the half's one", len(nss.Items))
	}
	pv := &framework.Case{Name: "pv", PersistentVolume: &corev1.PersistentVolume{}}
	if a, err := h.Admit(context.Background(), pv); err != nil || !a.Admission.Allowed || a.Pod != nil {
		t.Errorf("PersistentVolume: %+v, %v", a, err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	bs, _ := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(context.Background(), metav1.ListOptions{})
	nss, _ = client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if len(bs.Items) != 0 || len(nss.Items) != 0 {
		t.Errorf("after Close: %d bindings and %d namespaces left", len(bs.Items), len(nss.Items))
	}
}

// failingControl gives no apiserver for any gates.
type failingControl struct{ asked *int }

func (f failingControl) SetKubeletGates(context.Context, map[string]bool) error { return nil }
func (f failingControl) RestartKubelet(context.Context) error                   { return nil }
func (f failingControl) SetAPIServerGates(context.Context, map[string]bool) (string, error) {
	*f.asked++
	return "", errors.New("no apiserver for these gates")
}

// Reconfiguring, a case is admitted on the apiserver of its gates; when the cluster cannot give
// one, every case of those gates fails with why, and the cluster is asked once.
func TestAdmissionWithoutAnAPIServerOfTheGates(t *testing.T) {
	asked := 0
	tg := &Target{opts: Options{Log: io.Discard, Reconfigure: true, NodeControl: failingControl{&asked}},
		now:        nodecontrol.State{Gates: framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: false}}},
		namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
	tg.ctl = nodecontrol.NewDriver(tg.opts.NodeControl, nodeView{tg}, "node", &tg.now, nodecontrol.Waits{}, nil)
	h := &apiserverHalf{t: tg}
	for _, name := range []string{"a", "b"} {
		c := &framework.Case{Name: name, Gates: framework.Gates{APIServer: map[string]bool{framework.GateEmptyDirVolumeMode: true}},
			Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v"}}}}}
		if _, err := h.Admit(context.Background(), c); err == nil || !strings.Contains(err.Error(), "no apiserver for these gates") {
			t.Errorf("case %s: %v, want the cluster's answer", name, err)
		}
	}
	if asked != 1 {
		t.Errorf("the cluster was asked for an apiserver %d times, want once", asked)
	}
}

// Admissions run at once (framework batchpair.go sends several): the dry-runs are not made under
// the half's lock; each case gets a name of its own, the namespace is made once, and a case asked
// about again is answered from what was admitted.
func TestAdmissionsConcurrent(t *testing.T) {
	client := fake.NewClientset()
	var (
		mu             sync.Mutex
		inFlight, most int
		names          = map[string]bool{}
	)
	both := make(chan struct{})
	var once sync.Once
	// The fake clientset runs one request at a time: the wait is in front of it.
	slow := slowPodsClient{Clientset: client, wait: func(pod *corev1.Pod) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		names[pod.Name] = true
		if inFlight == 2 {
			once.Do(func() { close(both) })
		}
		mu.Unlock()
		select { // the first waits for a second: one at a time, it would wait in vain
		case <-both:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}}
	tg := &Target{opts: Options{Log: io.Discard, ProbeImage: "volperm/probe:test"}, client: client, admitClient: slow,
		version: "v1.37.1", kubeletVersion: "v1.37.1",
		namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
	h := &apiserverHalf{t: tg}
	var cases []*framework.Case
	for i := range 6 {
		cases = append(cases, &framework.Case{Name: fmt.Sprint(i), Pod: &corev1.Pod{Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: fmt.Sprintf("v%d", i), VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}})
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, err := h.Admit(context.Background(), c); err != nil || !a.Admission.Allowed || a.Pod == nil {
				t.Errorf("%s: %+v, %v", c.Name, a, err)
			}
		}()
	}
	wg.Wait()
	if most < 2 {
		t.Errorf("at most %d dry-run at once, want several", most)
	}
	if len(names) != len(cases) {
		t.Errorf("pod names %v: want one of its own per case", names)
	}
	nss, _ := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if len(nss.Items) != 1 {
		t.Errorf("%d namespaces, want the half's one", len(nss.Items))
	}
	if _, err := h.Admit(context.Background(), cases[0]); err != nil || len(names) != len(cases) {
		t.Errorf("a case admitted again: %v, %d dry-runs; want the answer kept", err, len(names))
	}
}

// Admissions of different allowlists bind at once: each binding is made without waiting for
// another's canary, and a canary shows every binding stored before it in effect. Here a canary
// is denied only once every allowlist is bound (as an apiserver whose informer lags would show
// them): one allowlist at a time, the first canary would wait in vain.
func TestAdmissionsBindAtOnce(t *testing.T) {
	const n = 6
	client := fake.NewClientset()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	canaries := map[string]bool{}
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		l := pod.Labels[PolicyLabel]
		if !strings.Contains(l, "canary") {
			return false, nil, nil
		}
		mu.Lock()
		canaries[l] = true
		mu.Unlock()
		bs, err := client.Tracker().List(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
			schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}, "")
		if err != nil {
			return true, nil, err
		}
		allowlists := 0
		for _, b := range bs.(*admissionv1.ValidatingAdmissionPolicyBindingList).Items {
			if !strings.Contains(b.Name, "canary") {
				allowlists++
			}
		}
		if allowlists < n {
			return false, nil, nil // not in effect yet: allowed
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
			errors.New("ValidatingAdmissionPolicy 'volperm-flexvolume-allowlist' with binding 'b' denied request: no volume type is allowed"))
	})
	tg := &Target{opts: Options{Log: io.Discard, ProbeImage: "volperm/probe:test"}, client: client, admitClient: client,
		version: "v1.37.1", kubeletVersion: "v1.37.1",
		namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
	h := &apiserverHalf{t: tg}
	var wg sync.WaitGroup
	labels := make([]string, n)
	for i := range n {
		c := &framework.Case{Name: fmt.Sprint(i), FlexVolumePolicy: &framework.FlexVolumePolicy{AllowedDrivers: []string{fmt.Sprintf("a/d%d", i)}},
			Pod: &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := h.Admit(ctx, c)
			if err != nil || a.Pod == nil {
				t.Errorf("%s: %+v, %v", c.Name, a, err)
				return
			}
			labels[i] = a.Pod.Labels[PolicyLabel]
		}()
	}
	wg.Wait()
	if len(canaries) >= n {
		t.Errorf("%d canaries for %d allowlists bound at once, want fewer", len(canaries), n)
	}
	seen := map[string]bool{}
	for i, l := range labels {
		if l == "" || seen[l] {
			t.Errorf("case %d: label %q, want one binding of its own", i, l)
		}
		seen[l] = true
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	bs, _ := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(context.Background(), metav1.ListOptions{})
	if len(bs.Items) != 0 {
		t.Errorf("after Close: %d bindings left", len(bs.Items))
	}
}

// slowPodsClient is a clientset whose pod creates call wait first.
type slowPodsClient struct {
	*fake.Clientset
	wait func(*corev1.Pod)
}

func (c slowPodsClient) CoreV1() corev1client.CoreV1Interface {
	return slowCore{c.Clientset.CoreV1(), c.wait}
}

type slowCore struct {
	corev1client.CoreV1Interface
	wait func(*corev1.Pod)
}

func (c slowCore) Pods(ns string) corev1client.PodInterface {
	return slowPods{c.CoreV1Interface.Pods(ns), c.wait}
}

type slowPods struct {
	corev1client.PodInterface
	wait func(*corev1.Pod)
}

func (p slowPods) Create(ctx context.Context, pod *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error) {
	p.wait(pod)
	return p.PodInterface.Create(ctx, pod, opts)
}
