//go:build linux

package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/testenv"
)

// TestKilledKeepalivedReleasesVIPs: a SIGKILLed keepalived on a live host (port up, controller
// running) leaves its VIPs on the interface while another member takes over; before the
// controller watched keepalived, the pod gateway then had two holders until someone removed the
// address by hand (issue 11, item 19). Real keepalived in network namespaces is the oracle.
func TestKilledKeepalivedReleasesVIPs(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	client := cp.Clientset(t)
	createNamespace(t, client, statusNS)
	tp := newTopology(t, groupConfig(0.05), client, t.Output())
	tp.startMembers()
	if _, err := client.CoreV1().Nodes().Create(context.Background(), windowsNode("win-a", podCIDR), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "exactly one member holds "+podGatewayIP, func() (bool, string) {
		h := tp.holders(podGatewayIP)
		return len(h) == 1, fmt.Sprint(h)
	})

	t.Run("keepalived killed, host and controller alive", func(t *testing.T) {
		old := tp.holders(podGatewayIP)[0]
		m := tp.member(old)
		start := time.Now()
		m.k.Kill() // SIGKILL: no priority-0 advert, no address cleanup; the port stays up
		eventually(t, 10*time.Second, "one member other than "+old+" holds the gateway", func() (bool, string) {
			h := tp.holders(podGatewayIP)
			return len(h) == 1 && h[0] != old, fmt.Sprint(h)
		})
		t.Logf("keepalived SIGKILLed on %s (port up): single holder again after %v", old, time.Since(start).Round(time.Millisecond))
		// The counter follows the release that made the single holder: await it.
		eventually(t, 10*time.Second, old+": orphaned_vips_released_total >= 1", func() (bool, string) {
			got := gauge(t, m, "kubewin_gateway_orphaned_vips_released_total")
			return got >= 1, fmt.Sprint(got)
		})
		stop := sampleHolders(t, tp, podGatewayIP)
		time.Sleep(time.Second)
		if bad := stop(); bad != 0 {
			t.Errorf("%d samples in 1s without exactly one holder after the release", bad)
		}
		// The DaemonSet restarts the keepalived container: it starts as BACKUP (nopreempt) and
		// the gateway stays where it is.
		holder := tp.holders(podGatewayIP)[0]
		tp.startKeepalived(m)
		time.Sleep(time.Second) // > 3 advert intervals
		if h := tp.holders(podGatewayIP); len(h) != 1 || h[0] != holder {
			t.Fatalf("after keepalived returned on %s, holders = %v; want [%s]", old, h, holder)
		}
	})

	t.Run("keepalived killed while the controller is down", func(t *testing.T) {
		old := tp.holders(podGatewayIP)[0]
		m := tp.member(old)
		tp.stopController(m) // e.g. a controller rollout
		m.k.Kill()
		eventually(t, 10*time.Second, "another member takes over (the stale address stays meanwhile)", func() (bool, string) {
			h := tp.holders(podGatewayIP)
			for _, x := range h {
				if x != old {
					return true, fmt.Sprint(h)
				}
			}
			return false, fmt.Sprint(h)
		})
		start := time.Now()
		tp.startController(m)
		eventually(t, 10*time.Second, "the restarted controller releases the stale address", func() (bool, string) {
			h := tp.holders(podGatewayIP)
			return len(h) == 1 && h[0] != old, fmt.Sprint(h)
		})
		t.Logf("controller restarted on %s with keepalived dead: single holder after %v", old, time.Since(start).Round(time.Millisecond))
	})
}
