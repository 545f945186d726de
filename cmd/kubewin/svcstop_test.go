package main

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// recorder collects what waitStopping reports.
type recorder struct {
	mu          sync.Mutex
	checkpoints []uint32
	answered    []int
}

func (r *recorder) progress(c uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checkpoints = append(r.checkpoints, c)
}

func (r *recorder) answer(q int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = append(r.answered, q)
}

func (r *recorder) snapshot() ([]uint32, []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]uint32(nil), r.checkpoints...), append([]int(nil), r.answered...)
}

func TestWaitStoppingReportsProgressUntilTheRunEnds(t *testing.T) {
	done := make(chan error, 1)
	reqs := make(chan int)
	var rec recorder
	result := make(chan error, 1)
	go func() {
		result <- waitStopping(done, reqs, time.Millisecond, time.Hour, rec.progress, rec.answer)
	}()
	// Wait for a few checkpoints: the pass is still running.
	for {
		if cps, _ := rec.snapshot(); len(cps) >= 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	reqs <- 7 // an Interrogate while stopping is answered
	passErr := errors.New("pass ended")
	done <- passErr
	if err := <-result; !errors.Is(err, passErr) {
		t.Fatalf("waitStopping = %v, want the run's error", err)
	}
	cps, answered := rec.snapshot()
	if cps[0] != 1 {
		t.Errorf("first checkpoint %d, want 1 (reported at once)", cps[0])
	}
	for i := 1; i < len(cps); i++ {
		if cps[i] != cps[i-1]+1 {
			t.Errorf("checkpoints %v do not increase by one", cps)
			break
		}
	}
	if len(answered) != 1 || answered[0] != 7 {
		t.Errorf("answered %v, want the one request", answered)
	}
}

func TestWaitStoppingRunEndedAlready(t *testing.T) {
	done := make(chan error, 1)
	done <- nil
	var rec recorder
	if err := waitStopping(done, make(chan int), time.Hour, time.Hour, rec.progress, rec.answer); err != nil {
		t.Fatalf("waitStopping = %v", err)
	}
	if cps, _ := rec.snapshot(); len(cps) != 1 || cps[0] != 1 {
		t.Errorf("checkpoints %v, want [1]: StopPending is reported before waiting", cps)
	}
}

func TestWaitStoppingGivesUp(t *testing.T) {
	var rec recorder
	err := waitStopping(make(chan error), make(chan int), time.Hour, time.Millisecond, rec.progress, rec.answer)
	if !errors.Is(err, errStopTimedOut) {
		t.Fatalf("waitStopping = %v, want errStopTimedOut", err)
	}
}
