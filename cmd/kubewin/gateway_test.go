//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/gateway"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/internal/testenv/netns"
)

func gatewayGroupFile(t *testing.T) string {
	t.Helper()
	cfg := gateway.GroupConfig{
		APIVersion: gateway.ConfigAPIVersion, Kind: gateway.ConfigKind, Name: "wingw", Interface: "eth1",
		Members: []plan.GatewayMemberPlan{
			{Node: "gw1", IP: "192.168.50.11", Priority: 150, RouterID: "kubewin_wingw_gw1"},
			{Node: "gw2", IP: "192.168.50.12", Priority: 140, RouterID: "kubewin_wingw_gw2"},
		},
		VRRPVersion: 3, AdvertIntervalSeconds: 0.1, VRIDRange: [2]int{100, 110}, VIPsPerInstance: 254,
		ClusterCIDRs: []string{"10.128.0.0/14"}, NodeCIDRMaskSize: 24, RouterVIPs: []string{"192.168.50.200"},
	}
	b, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "wingw.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGatewayCommandBadInput(t *testing.T) {
	group := gatewayGroupFile(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no group", []string{"gateway", "--node-name", "gw1", "--config", group}, "--group is required"},
		{"no node", []string{"gateway", "--group", "wingw", "--node-name", "", "--config", group}, "--node-name"},
		{"missing config", []string{"gateway", "--group", "wingw", "--node-name", "gw1", "--config", "/nonexistent.json"}, "read gateway group config"},
		{"other group", []string{"gateway", "--group", "other", "--node-name", "gw1", "--config", group}, `not --group "other"`},
		{"not a member", []string{"gateway", "--group", "wingw", "--node-name", "lin1", "--config", group, "--kubeconfig", "/nonexistent"}, "not a member"},
		{"negative stall", []string{"gateway", "--group", "wingw", "--node-name", "gw1", "--config", group, "--keepalived-stall", "-1s"}, "--keepalived-stall"},
		{"bad log format", []string{"gateway", "routes", "--group", "wingw", "--node-name", "lin1", "--config", group, "--log-format", "xml"}, "--log-format"},
		{"unknown netns", []string{"gateway", "routes", "--group", "wingw", "--node-name", "lin1", "--config", group, "--kubeconfig", "/nonexistent", "--netns", "kwt-no-such-ns"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

// buildKubewin builds the real binary (the DaemonSet runs it as a process of its own).
func buildKubewin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubewin")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestGatewayCommand runs the built binary against a real API server: --once installs the
// configuration, the controller keeps keepalived (in a namespace) in line and serves metrics,
// SIGTERM stops it with exit 0, and `gateway routes` installs a route.
func TestGatewayCommand(t *testing.T) {
	bin := buildKubewin(t)
	cp := testenv.StartControlPlane(t)
	client := cp.Clientset(t)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubewin-system"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	win := func(name, cidr string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": "windows"}}}
		n.Spec.PodCIDRs = []string{cidr}
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	win("win-a", "10.128.1.0/24")
	win("win-b", "10.128.2.0/24")

	sw := netns.New(t, "cmdsw")
	sw.Bridge(t, "br0")
	gw := netns.New(t, "cmdgw")
	netns.Veth(t, gw, "eth1", sw, "p-gw")
	sw.Attach(t, "p-gw", "br0")
	gw.AddAddr(t, "eth1", "192.168.50.11/24")
	lin := netns.New(t, "cmdlin")
	netns.Veth(t, lin, "eth0", sw, "p-lin")
	sw.Attach(t, "p-lin", "br0")
	lin.AddAddr(t, "eth0", "192.168.50.21/24")

	group := gatewayGroupFile(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "keepalived.conf")
	common := []string{"--group", "wingw", "--config", group, "--kubeconfig", cp.KubeconfigPath}

	once := exec.Command(bin, append([]string{"gateway", "--node-name", "gw1", "--netns", gw.Name, "--keepalived-config", conf, "--once"}, common...)...)
	if out, err := once.CombinedOutput(); err != nil {
		t.Fatalf("gateway --once: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(conf); strings.Count(string(b), "10.128.") != 2 {
		t.Fatalf("--once installed:\n%s", b)
	}

	k := netns.StartKeepalived(t, gw, conf, dir)
	port := freePort(t)
	ctrl := exec.Command(bin, append([]string{"gateway", "--node-name", "gw1", "--netns", gw.Name, "--keepalived-config", conf,
		"--keepalived-pidfile", k.PIDFile, "--metrics-address", fmt.Sprintf("127.0.0.1:%d", port), "--resync", "1s"}, common...)...)
	logPath := filepath.Join(dir, "gateway.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	ctrl.Stdout, ctrl.Stderr = logf, logf
	ctrl.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := ctrl.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ctrl.Wait() }()
	t.Cleanup(func() {
		_ = ctrl.Process.Kill()
		<-exited
	})
	fail := func(format string, args ...any) {
		t.Helper()
		b, _ := os.ReadFile(logPath)
		t.Fatalf(format+"\n--- gateway log ---\n%s\n--- keepalived ---\n%s", append(args, b, k.Log())...)
	}

	win("win-c", "10.128.3.0/24")
	deadline := time.Now().Add(30 * time.Second)
	var metrics string
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			metrics = string(b)
			if strings.Contains(metrics, `kubewin_gateway_vips_held{group="wingw",member="gw1"} 3`) {
				break
			}
		}
		if time.Now().After(deadline) {
			fail("keepalived did not come to hold 3 VIPs; metrics:\n%s", metrics)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{`kubewin_gateway_vips_configured{group="wingw",member="gw1"} 3`, "kubewin_gateway_reloads_total", "kubewin_gateway_last_sync_timestamp_seconds", "go_goroutines"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, ip := range []string{"10.128.3.1", "192.168.50.200"} {
		if ok, _ := gw.HasAddr(ip); !ok {
			fail("%s not on the gateway interface", ip)
		}
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		cm, err := client.CoreV1().ConfigMaps("kubewin-system").Get(ctx, gateway.StatusName("wingw", "gw1"), metav1.GetOptions{})
		if err == nil && len(gateway.ParseHeld(cm)) == 3 {
			break
		}
		if time.Now().After(deadline) {
			fail("status ConfigMap not written: %v %v", cm, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	routes := exec.Command(bin, append([]string{"gateway", "routes", "--node-name", "lin", "--netns", lin.Name, "--metrics-address", ""}, common...)...)
	routes.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	routesLog := filepath.Join(dir, "routes.log")
	rl, err := os.Create(routesLog)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	routes.Stdout, routes.Stderr = rl, rl
	if err := routes.Start(); err != nil {
		t.Fatal(err)
	}
	routesDone := make(chan error, 1)
	go func() { routesDone <- routes.Wait() }()
	t.Cleanup(func() { _ = routes.Process.Kill(); <-routesDone })
	deadline = time.Now().Add(30 * time.Second)
	for {
		out, _ := lin.Run(ctx, "ip", "route", "show", "10.128.3.0/24")
		if strings.Contains(string(out), "via 192.168.50.200") {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(routesLog)
			t.Fatalf("route keeper installed no route; routes: %s\nlog:\n%s", out, b)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A restarted pod while the API server is down: the init step keeps the existing file
	// (exit 0, fail-static across restarts) but cannot invent one (exit 1).
	stopBegan := time.Now()
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("API server stopped in %s", time.Since(stopBegan).Round(time.Millisecond))
	began := time.Now()
	out, err := exec.Command(bin, append([]string{"gateway", "--node-name", "gw1", "--netns", gw.Name, "--keepalived-config", conf, "--once", "--once-timeout", "1m"}, common...)...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kept the existing") || time.Since(began) > 30*time.Second {
		t.Errorf("--once with the API down and a configuration present: %v after %s\n%s", err, time.Since(began), out)
	}
	out, err = exec.Command(bin, append([]string{"gateway", "--node-name", "gw1", "--netns", gw.Name, "--keepalived-config", filepath.Join(dir, "none.conf"), "--once", "--once-timeout", "3s"}, common...)...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("--once with the API down and no configuration: %v, want exit 1\n%s", err, out)
	}

	for name, p := range map[string]*exec.Cmd{"gateway": ctrl, "routes": routes} {
		t.Logf("%s: SIGTERM at %s", name, time.Now().Format("15:04:05.000"))
		if err := p.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		ch := exited
		if name == "routes" {
			ch = routesDone
		}
		select {
		case err := <-ch:
			if err != nil {
				fail("%s: exit after SIGTERM: %v", name, err)
			}
			ch <- nil // for the cleanup
		case <-time.After(20 * time.Second):
			fail("%s did not stop within 20s of SIGTERM", name)
		}
	}
}
