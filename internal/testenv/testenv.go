// Package testenv starts a real etcd and kube-apiserver on loopback for tests that talk to
// Kubernetes. Every control plane has its own ports, directory and certificates, so test packages
// may run concurrently; everything is stopped and removed through t.Cleanup, also on failure.
//
// The binaries come from Assets: KUBEWIN_TEST_ASSETS or KUBEBUILDER_ASSETS, else
// hack/kube-binaries/build.sh (which builds them once into the Go cache). Tests never skip for
// lack of binaries.
package testenv

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// DefaultServiceCIDR is the --service-cluster-ip-range used unless WithServiceCIDR says otherwise.
const DefaultServiceCIDR = "10.96.0.0/12"

// readyTimeout bounds how long a start may take before the test fails; a cold start on these
// machines takes a few seconds.
const readyTimeout = 90 * time.Second

// ControlPlane is one running etcd + kube-apiserver pair.
type ControlPlane struct {
	// Config is an admin client configuration (client certificate in group system:masters).
	Config *rest.Config
	// KubeconfigPath is an admin kubeconfig file for the same identity.
	KubeconfigPath string
	// Host is the API server URL (https://127.0.0.1:PORT).
	Host string
	// ServiceCIDR is the --service-cluster-ip-range the API server runs with.
	ServiceCIDR string
	// Dir holds data, certificates and the logs etcd.log and kube-apiserver.log.
	Dir string
	// StartDuration is how long the first start took until /readyz answered ok.
	StartDuration time.Duration

	apiBin   string
	apiArgs  []string
	assets   string
	pkiFiles map[string]string

	mu    sync.Mutex
	api   *process
	etcd  *process
	kcm   *process
	sched *process
}

type options struct {
	serviceCIDR string
	extraArgs   []string
	// bindIP, when set, is where kube-apiserver listens instead of 127.0.0.1: an address of
	// this host that a node in a network namespace reaches over a veth (WithNodeAccess).
	bindIP string
	// authzModes is --authorization-mode (a list flag: given twice, the modes add up).
	authzModes string
	// serviceAccounts: pods get service-account tokens and reach the API server in-cluster
	// (WithServiceAccounts).
	serviceAccounts bool
}

// Option tunes a control plane.
type Option func(*options)

// WithServiceCIDR sets --service-cluster-ip-range (the kubernetes Service gets its first address).
func WithServiceCIDR(cidr string) Option { return func(o *options) { o.serviceCIDR = cidr } }

// WithAPIServerArgs appends kube-apiserver flags (later flags override earlier ones).
func WithAPIServerArgs(args ...string) Option {
	return func(o *options) { o.extraArgs = append(o.extraArgs, args...) }
}

// WithNodeAccess makes the control plane one that real nodes join: kube-apiserver listens on ip
// (an address of this host on a veth towards a node's network namespace, also in its serving
// certificate) and authorizes with Node,RBAC and the NodeRestriction admission plugin, as
// kubeadm clusters do.
func WithNodeAccess(ip string) Option {
	return func(o *options) {
		o.bindIP = ip
		o.authzModes = "Node,RBAC"
		o.extraArgs = append(o.extraArgs, "--enable-admission-plugins=NodeRestriction")
	}
}

// WithServiceAccounts makes pods on joined nodes able to use the in-cluster configuration, as on
// real clusters: the ServiceAccount admission plugin stays enabled (pods get their account's
// token), the serving certificate also names the kubernetes Service (its ClusterIP and
// kubernetes.default.svc...), and, when the API server advertises a non-loopback address
// (WithNodeAccess), the lease endpoint reconciler keeps that address as the kubernetes Service's
// endpoint. The ServiceAccount and token controllers and the kube-root-ca.crt publisher run in
// StartControllerManager; a node needs kube-proxy for the ClusterIP to lead anywhere.
func WithServiceAccounts() Option { return func(o *options) { o.serviceAccounts = true } }

// StartControlPlane starts a fresh etcd and kube-apiserver and returns once /readyz is ok. The
// test fails (t.Fatal) if that is not possible; everything is stopped and removed at cleanup.
func StartControlPlane(t testing.TB, opts ...Option) *ControlPlane {
	t.Helper()
	o := options{serviceCIDR: DefaultServiceCIDR, authzModes: "RBAC"}
	for _, opt := range opts {
		opt(&o)
	}
	assets, err := Assets()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	var lastErr error
	// A port picked by freePorts can be taken by a concurrent test before our child binds it;
	// such a start is retried with new ports.
	for attempt := 0; attempt < 3; attempt++ {
		dir := t.TempDir()
		cp, err := start(assets, dir, o)
		if err == nil {
			t.Cleanup(func() {
				if err := cp.stopAll(); err != nil {
					t.Errorf("testenv: stop control plane: %v", err)
				}
			})
			t.Logf("testenv: kube-apiserver %s ready in %s (service CIDR %s)", cp.Host, cp.StartDuration.Round(time.Millisecond), cp.ServiceCIDR)
			return cp
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("testenv: %v", lastErr)
	return nil
}

func start(assets, dir string, o options) (cp *ControlPlane, err error) {
	began := time.Now()
	etcdBin, err := binary(assets, "etcd")
	if err != nil {
		return nil, err
	}
	apiBin, err := binary(assets, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	bindIP := "127.0.0.1"
	if o.bindIP != "" {
		bindIP = o.bindIP
	}
	apiHost := net.JoinHostPort(bindIP, strconv.Itoa(apiPort))

	cp = &ControlPlane{Dir: dir, ServiceCIDR: o.serviceCIDR, apiBin: apiBin, assets: assets,
		Host: "https://" + apiHost}
	started := cp // the error returns below set cp to nil
	defer func() {
		if err != nil {
			started.stopAll()
		}
	}()

	certs, err := newPKI(net.ParseIP(bindIP))
	if err != nil {
		return nil, err
	}
	if o.serviceAccounts {
		// In-cluster clients dial https://<first service IP>:443 and verify that name.
		svcIP, err := firstServiceIP(o.serviceCIDR)
		if err != nil {
			return nil, err
		}
		certs.certPEM, certs.keyPEM, err = certs.issue(4, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
			append(serveIPs(net.ParseIP(bindIP)), svcIP),
			[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
		if err != nil {
			return nil, err
		}
	}
	pkiDir := filepath.Join(dir, "pki")
	if err := os.Mkdir(pkiDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", pkiDir, err)
	}
	files, err := certs.writeFiles(pkiDir)
	if err != nil {
		return nil, err
	}
	cp.pkiFiles = files

	etcdURL := "http://" + hostPort(etcdClient)
	peerURL := "http://" + hostPort(etcdPeer)
	cp.etcd, err = startProcess("etcd", etcdBin, []string{
		"--name=testenv",
		"--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testenv=" + peerURL,
		// Test data is thrown away; fsync only slows bulk creates (the 5,000-node benchmark).
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}, filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(cp.etcd, etcdURL+"/health", nil); err != nil {
		return nil, err
	}

	// A loopback advertise address cannot be an endpoint of the kubernetes Service.
	reconciler := "none"
	if o.serviceAccounts && !net.ParseIP(bindIP).IsLoopback() {
		reconciler = "lease"
	}
	// No controller-manager creates default ServiceAccounts unless started, so pods are
	// admitted without one unless WithServiceAccounts asks for real service-account tokens.
	admission := []string{"--disable-admission-plugins=ServiceAccount"}
	if o.serviceAccounts {
		admission = nil
	}
	cp.apiArgs = append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + bindIP,
		"--advertise-address=" + bindIP,
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--endpoint-reconciler-type=" + reconciler,
		"--service-cluster-ip-range=" + o.serviceCIDR,
		"--client-ca-file=" + files["ca.crt"],
		"--tls-cert-file=" + files["server.crt"],
		"--tls-private-key-file=" + files["server.key"],
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + files["sa.pub"],
		"--service-account-signing-key-file=" + files["sa.key"],
		"--authorization-mode=" + o.authzModes,
		// Bootstrap tokens authenticate joining nodes (kubewin token create), as on kubeadm clusters.
		"--enable-bootstrap-token-auth=true",
		// Static-pod-like objects need privileged containers.
		"--allow-privileged=true",
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
	}, append(admission, o.extraArgs...)...)

	cp.Config = &rest.Config{
		Host: cp.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   certs.caPEM,
			CertData: certs.adminCertPEM,
			KeyData:  certs.adminKeyPEM,
		},
		QPS:   -1, // tests create objects in bulk; the API server's own limits apply
		Burst: 0,
	}
	if cp.KubeconfigPath, err = writeKubeconfig(dir, cp.Host, certs); err != nil {
		return nil, err
	}
	if err := cp.StartAPIServer(); err != nil {
		return nil, err
	}
	if err := waitBootstrap(cp.Config); err != nil {
		return nil, err
	}
	cp.StartDuration = time.Since(began)
	return cp, nil
}

// StopAPIServer stops kube-apiserver only; etcd keeps the data so StartAPIServer resumes the
// same cluster. Tests of fail-static behaviour use it. The grace period is short on purpose: with
// a client's watch open kube-apiserver drains for up to 30 s, and an outage is what those tests
// simulate, so a crash (SIGKILL after 1 s) is the more faithful model and keeps the suite fast.
func (cp *ControlPlane) StopAPIServer() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.api == nil {
		return nil
	}
	err := cp.api.stop(time.Second)
	cp.api = nil
	return err
}

// StartAPIServer starts kube-apiserver (again) on the same address and waits for /readyz.
func (cp *ControlPlane) StartAPIServer() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.api != nil {
		if done, _ := cp.api.exited(); !done {
			return fmt.Errorf("kube-apiserver %s is already running", cp.Host)
		}
	}
	api, err := startProcess("kube-apiserver", cp.apiBin, cp.apiArgs, filepath.Join(cp.Dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	cp.api = api
	if err := waitHTTP(api, cp.Host+"/readyz", cp.Config); err != nil {
		api.stop(10 * time.Second)
		cp.api = nil
		return err
	}
	return nil
}

// Clientset returns a typed admin client.
func (cp *ControlPlane) Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatalf("testenv: clientset: %v", err)
	}
	return cs
}

func (cp *ControlPlane) stopAll() error {
	cp.mu.Lock()
	if cp.kcm != nil {
		cp.kcm.stop(5 * time.Second)
		cp.kcm = nil
	}
	if cp.sched != nil {
		cp.sched.stop(5 * time.Second)
		cp.sched = nil
	}
	cp.mu.Unlock()
	apiErr := cp.StopAPIServer()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	etcdErr := cp.etcd.stop(30 * time.Second)
	cp.etcd = nil
	if apiErr != nil {
		return apiErr
	}
	return etcdErr
}

// StartControllerManager starts kube-controller-manager against the control plane with what a
// joining node needs from it: the range allocator over clusterCIDR (--allocate-node-cidrs, node
// CIDRs of maskSize bits), csrsigning with the cluster CA, csrapproving (bootstrap and renewal
// auto-approval follow the RBAC that kubewin token create binds), the service-account token
// controller, and node lifecycle. It is stopped with the control plane.
// extraArgs are appended (e.g. --cluster-signing-duration for a renewal test).
func (cp *ControlPlane) StartControllerManager(t testing.TB, clusterCIDR string, maskSize int, extraArgs ...string) {
	t.Helper()
	bin, err := binary(cp.assets, "kube-controller-manager")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	args := []string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--leader-elect=false",
		// No serving port: nothing here scrapes it, and parallel tests would fight over 10257.
		"--secure-port=0",
		"--controllers=*,bootstrapsigner,tokencleaner",
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + clusterCIDR,
		fmt.Sprintf("--node-cidr-mask-size=%d", maskSize),
		"--service-cluster-ip-range=" + cp.ServiceCIDR,
		"--cluster-signing-cert-file=" + cp.pkiFiles["ca.crt"],
		"--cluster-signing-key-file=" + cp.pkiFiles["ca.key"],
		"--root-ca-file=" + cp.pkiFiles["ca.crt"],
		"--service-account-private-key-file=" + cp.pkiFiles["sa.key"],
		"--use-service-account-credentials=false",
	}
	p := cp.startController(t, "kube-controller-manager", bin, append(args, extraArgs...))
	cp.mu.Lock()
	cp.kcm = p
	cp.mu.Unlock()
}

// startController starts a control-plane component and fails the test if it exits at once (bad
// flags, a port in use); the caller records the process under cp.mu's protection.
func (cp *ControlPlane) startController(t testing.TB, name, bin string, args []string) *process {
	t.Helper()
	p, err := startProcess(name, bin, args, filepath.Join(cp.Dir, name+".log"))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if done, err := p.exited(); done {
		t.Fatalf("testenv: %s exited (%v):\n%s", name, err, p.tail(4000))
	}
	return p
}

// StartScheduler starts kube-scheduler against the control plane (DaemonSet pods are bound to
// their nodes by the default scheduler). It is stopped with the control plane.
func (cp *ControlPlane) StartScheduler(t testing.TB, extraArgs ...string) {
	t.Helper()
	bin, err := binary(cp.assets, "kube-scheduler")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	args := append([]string{
		"--kubeconfig=" + cp.KubeconfigPath,
		// The same kubeconfig authenticates and authorizes its delegated requests; without
		// these it would look for the extension-apiserver-authentication ConfigMap.
		"--authentication-kubeconfig=" + cp.KubeconfigPath,
		"--authorization-kubeconfig=" + cp.KubeconfigPath,
		"--leader-elect=false",
		// No serving port: nothing here scrapes it, and parallel tests would fight over 10259.
		"--secure-port=0",
	}, extraArgs...)
	p := cp.startController(t, "kube-scheduler", bin, args)
	cp.mu.Lock()
	cp.sched = p
	cp.mu.Unlock()
}

// firstServiceIP is the kubernetes Service's ClusterIP: the first address of the service CIDR.
func firstServiceIP(cidr string) (net.IP, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("service CIDR %q: %w", cidr, err)
	}
	return net.IP(p.Masked().Addr().Next().AsSlice()), nil
}

// waitHTTP polls url until it answers 200 or the process exits.
func waitHTTP(p *process, url string, cfg *rest.Config) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if cfg != nil {
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			return fmt.Errorf("transport for %s: %w", url, err)
		}
		client.Transport = rt
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	var last string
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited before %s was ready (%v); log tail:\n%s", p.name, url, err, p.tail(4000))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s after %s (last: %s); log tail:\n%s", p.name, url, readyTimeout, last, p.tail(4000))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitBootstrap waits for what the API server creates shortly after /readyz and real clusters
// always have: the kubernetes Service and the default ServiceCIDR.
func waitBootstrap(cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if _, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		if _, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the kubernetes Service and ServiceCIDR: %w", err)
	}
	return nil
}

func writeKubeconfig(dir, host string, certs *pki) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: certs.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: certs.adminCertPEM, ClientKeyData: certs.adminKeyPEM}
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "admin"}
	cfg.CurrentContext = "testenv"
	path := filepath.Join(dir, "admin.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return path, nil
}
