package main

import (
	"errors"
	"time"
)

// The Windows node service's stop (service_windows.go) waits for the current Reconciler pass,
// which can block in HCN for up to winnode.DefaultPassTimeout, while telling the service control
// manager it is still stopping. The SCM treats a pending service that neither increments
// CheckPoint nor changes state within WaitHint as failed ("If the amount of time specified by
// dwWaitHint passes, and dwCheckPoint has not been incremented or dwCurrentState has not
// changed, the service control manager or service control program can assume that an error has
// occurred", learn.microsoft.com/windows/win32/api/winsvc/ns-winsvc-service_status). The waiting
// is OS-neutral so that it is tested here.

// errStopTimedOut is returned when the run did not end within the stop limit.
var errStopTimedOut = errors.New("the node service did not finish its pass in time; stopping anyway")

// waitStopping waits for the run's result on done while a stop is pending. It reports progress
// at once with checkpoint 1 and then every `every` with the next checkpoint, answers the
// requests that arrive meanwhile (the SCM still sends Interrogate to a stopping service), and
// gives up after limit with errStopTimedOut. every must be well below the WaitHint reported with
// the checkpoints.
func waitStopping[R any](done <-chan error, reqs <-chan R, every, limit time.Duration,
	progress func(checkpoint uint32), answer func(R)) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	giveUp := time.NewTimer(limit)
	defer giveUp.Stop()
	checkpoint := uint32(1)
	progress(checkpoint)
	for {
		select {
		case err := <-done:
			return err
		case r := <-reqs:
			answer(r)
		case <-tick.C:
			checkpoint++
			progress(checkpoint)
		case <-giveUp.C:
			return errStopTimedOut
		}
	}
}
