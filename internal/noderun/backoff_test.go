package noderun

import (
	"testing"
	"time"
)

func TestBackoffDoublesAndResets(t *testing.T) {
	r := newRunner(&Supervisor{ManifestPath: "unused", BackoffMin: time.Second, BackoffMax: 8 * time.Second})
	sv := &service{}
	steps := []struct {
		uptime time.Duration
		want   time.Duration
	}{
		{0, time.Second},
		{time.Second, 2 * time.Second},
		{59 * time.Second, 4 * time.Second},
		{0, 8 * time.Second},
		{0, 8 * time.Second},            // capped at BackoffMax
		{60 * time.Second, time.Second}, // a run of a minute counts as healthy
		{0, 2 * time.Second},
	}
	for i, st := range steps {
		before := time.Now()
		r.backoff(sv, st.uptime)
		if sv.delay != st.want || sv.state != StateBackoff {
			t.Fatalf("step %d (uptime %v): delay %v state %s, want %v backoff", i, st.uptime, sv.delay, sv.state, st.want)
		}
		if sv.nextStart.Before(before.Add(st.want)) {
			t.Fatalf("step %d: next start %v is earlier than %v after the exit", i, sv.nextStart, st.want)
		}
	}
}
