//go:build linux

package netns

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBridgeSegment builds two hosts on a bridge that lives in its own namespace and pings
// across it; cleanup must leave no namespace behind.
func TestBridgeSegment(t *testing.T) {
	var names []string
	t.Run("topology", func(t *testing.T) {
		sw := New(t, "sw")
		sw.Bridge(t, "br0")
		a := New(t, "a")
		b := New(t, "b")
		names = []string{sw.Name, a.Name, b.Name}
		Veth(t, a, "eth0", sw, "a0")
		Veth(t, b, "eth0", sw, "b0")
		sw.Attach(t, "a0", "br0")
		sw.Attach(t, "b0", "br0")
		a.AddAddr(t, "eth0", "192.0.2.1/24")
		b.AddAddr(t, "eth0", "192.0.2.2/24")
		if out, err := a.Run(t.Context(), "ping", "-c1", "-W2", "192.0.2.2"); err != nil {
			t.Fatalf("ping across bridge: %v\n%s", err, out)
		}
		ok, err := b.HasAddr("192.0.2.2")
		if err != nil || !ok {
			t.Fatalf("HasAddr(192.0.2.2) = %v, %v; want true", ok, err)
		}
		if ok, _ := a.HasAddr("192.0.2.2"); ok {
			t.Fatal("HasAddr in the wrong namespace reported true")
		}
		// Do runs in the namespace: its hostname-independent view is the interface list.
		err = a.Do(func() error {
			b, err := os.ReadFile("/proc/net/dev")
			if err == nil && !strings.Contains(string(b), "eth0") {
				t.Error("Do did not enter the namespace: no eth0 in /proc/net/dev")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(string(out), n) {
			t.Errorf("namespace %s still exists after cleanup", n)
		}
	}
}

// TestKeepalivedHelper starts keepalived in a namespace, waits for it to claim the VIP as the
// only router, and checks that cleanup kills the whole process group.
func TestKeepalivedHelper(t *testing.T) {
	var pids []int
	t.Run("run", func(t *testing.T) {
		sw := New(t, "ksw")
		sw.Bridge(t, "br0")
		h := New(t, "kh")
		Veth(t, h, "eth0", sw, "h0")
		sw.Attach(t, "h0", "br0")
		h.AddAddr(t, "eth0", "192.0.2.10/24")
		k := StartKeepalived(t, h, "testdata/keepalived-single.conf", t.TempDir())
		parent, err := ReadPID(k.PIDFile)
		if err != nil {
			t.Fatal(err)
		}
		child, err := ReadPID(k.VRRPPIDFile)
		if err != nil {
			t.Fatal(err)
		}
		pids = []int{parent, child}
		deadline := time.Now().Add(10 * time.Second)
		for {
			ok, err := h.HasAddr("192.0.2.100")
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("VIP not claimed in 10s; log:\n%s", k.Log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	for _, pid := range pids {
		if Alive(pid) {
			t.Errorf("keepalived pid %d survived cleanup", pid)
		}
	}
}
