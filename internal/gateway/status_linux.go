package gateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reportStatus writes the member's status object when what it holds changes (at most every
// 500ms) and as a heartbeat. Write failures are counted and retried; they never touch VIPs.
func (c *Controller) reportStatus(ctx context.Context) {
	if c.o.StatusNamespace == "" {
		return
	}
	heartbeat := time.NewTicker(c.o.Heartbeat)
	defer heartbeat.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	var last map[string]string
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.statusDirty:
		case <-heartbeat.C:
			last = nil // force a write
		case <-retry.C:
		}
		// Coalesce a failover's burst of address events into one write.
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		data := c.statusData()
		if data == nil || sameStatus(last, data) {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.writeStatus(wctx, data)
		cancel()
		if err != nil {
			c.m.StatusWriteErrs.Inc()
			c.log.Warn("write member status; retrying", "error", err, "in", backoff)
			retry.Reset(backoff)
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
		last = data
	}
}

func (c *Controller) statusData() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.installed == nil {
		return nil
	}
	data := map[string]string{
		StatusKeyHeld:       strings.Join(c.hold.VIPs, "\n"),
		StatusKeyInstances:  strings.Join(c.hold.Instances, "\n"),
		StatusKeyConfigured: strconv.Itoa(vipCount(*c.installed)),
		StatusKeyConfigHash: c.configHash,
		StatusKeyHeartbeat:  time.Now().UTC().Format(time.RFC3339),
	}
	// Calico keys only where Calico IPAM is in use, so other clusters' status objects stay as
	// they were.
	if cs := c.calico; cs.APIVersion != "" || cs.Err != "" {
		conflicts := make([]string, len(cs.Conflicts))
		for i, x := range cs.Conflicts {
			conflicts[i] = x.String()
		}
		data[StatusKeyCalicoReserved] = strings.Join(cs.Reserved, "\n")
		data[StatusKeyCalicoUnreserved] = strings.Join(cs.Unreserved, "\n")
		data[StatusKeyCalicoConflicts] = strings.Join(conflicts, "\n")
		data[StatusKeyCalicoError] = cs.Err
	}
	return data
}

// sameStatus compares everything but the heartbeat.
func sameStatus(a, b map[string]string) bool {
	if a == nil {
		return false
	}
	for _, k := range []string{StatusKeyHeld, StatusKeyInstances, StatusKeyConfigured, StatusKeyConfigHash,
		StatusKeyCalicoReserved, StatusKeyCalicoUnreserved, StatusKeyCalicoConflicts, StatusKeyCalicoError} {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

func (c *Controller) writeStatus(ctx context.Context, data map[string]string) error {
	name := StatusName(c.o.Config.Name, c.o.NodeName)
	cms := c.o.Client.CoreV1().ConfigMaps(c.o.StatusNamespace)
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// The manifests pre-create it; creating is a fallback for setups that grant create.
		_, err = cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.o.StatusNamespace, Labels: statusLabels(c.o.Config.Name, c.o.NodeName)},
			Data:       data,
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create status %s/%s: %w", c.o.StatusNamespace, name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get status %s/%s: %w", c.o.StatusNamespace, name, err)
	}
	cm.Data = data
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status %s/%s: %w", c.o.StatusNamespace, name, err)
	}
	return nil
}
