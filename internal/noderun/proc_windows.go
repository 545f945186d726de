package noderun

import (
	"os"
	"os/exec"
)

// On Windows there are no process groups to signal and no SIGTERM: a service is stopped with
// TerminateProcess (Process.Kill). Children the service spawned are not reached; a Job Object
// would fix that and is left for when the node service runs on a real Windows host, which
// cannot be exercised here (this file is only compiled: GOOS=windows go vet).

func setProcessGroup(cmd *exec.Cmd) {}

func terminateGroup(p *os.Process) error { return p.Kill() }

func killGroup(p *os.Process) error { return p.Kill() }

// groupAlive is false because, without a group, the leader's exit is all that can be observed.
func groupAlive(p *os.Process) bool { return false }

func exitSignal(ps *os.ProcessState) string { return "" }
