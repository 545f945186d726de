package noderun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubewin/kubewin/internal/atomicfs"
)

// State is where a service is in its life cycle.
type State string

const (
	// StateWaiting: not started because a dependency is not running or a file is missing
	// (WaitingFor says which).
	StateWaiting State = "waiting"
	// StateStarting: the process runs but has not yet been alive for StartGrace, so services
	// that come after it are held back.
	StateStarting State = "starting"
	// StateRunning: alive for at least StartGrace.
	StateRunning State = "running"
	// StateBackoff: exited (or failed to start) and waits out the backoff delay.
	StateBackoff State = "backoff"
	// StateStopping: asked to stop (shutdown, removal, definition change or Restart) and not
	// yet exited.
	StateStopping State = "stopping"
	// StateStopped: stopped by the supervisor during shutdown.
	StateStopped State = "stopped"
)

// Status is the state of all services, as written to the status file.
type Status struct {
	// ManifestError is why the latest manifest content was rejected; the services keep
	// running from the last valid one. Empty when the manifest is valid or missing.
	ManifestError string `json:"manifestError,omitempty"`
	// Services are sorted by name.
	Services []ServiceStatus `json:"services"`
}

// ServiceStatus is the state of one service.
type ServiceStatus struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// PID is the process id while a process exists (starting, running, stopping), else 0.
	PID int `json:"pid,omitempty"`
	// Started is when that process was started: the clock StartGrace runs on.
	Started *time.Time `json:"started,omitempty"`
	// Since is when the service entered State.
	Since time.Time `json:"since"`
	// Restarts counts every start after the first, whatever caused it (exit, Restart,
	// definition change).
	Restarts int `json:"restarts"`
	// WaitingFor is "file <path>" or "service <name>" while State is waiting.
	WaitingFor string `json:"waitingFor,omitempty"`
	// LastExit describes the most recent end of a process (or failure to start one).
	LastExit *ExitStatus `json:"lastExit,omitempty"`
}

// ExitStatus describes how a process ended.
type ExitStatus struct {
	// Code is the exit code, or -1 when the process was killed by a signal or never started.
	Code int `json:"code"`
	// Signal names the signal that killed the process ("terminated", "killed"), if any.
	Signal string `json:"signal,omitempty"`
	// Error is why the process could not be started, if it could not.
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at"`
	// LogTail holds the last lines the process wrote, so the status shows why it died without
	// opening the log.
	LogTail []string `json:"logTail,omitempty"`
}

// ReadStatus reads a status file written by a Supervisor.
func ReadStatus(path string) (*Status, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read node services status: %w", err)
	}
	st, err := parseStatus(data)
	if err != nil {
		return nil, fmt.Errorf("read node services status %s: %w", path, err)
	}
	return st, nil
}

func parseStatus(data []byte) (*Status, error) {
	var st Status
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode: unexpected data after the status object")
	}
	return &st, nil
}

func marshalStatus(st Status) ([]byte, error) {
	if st.Services == nil {
		st.Services = []ServiceStatus{}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func writeStatus(path string, st Status) error {
	data, err := marshalStatus(st)
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write status %s: %w", path, err)
	}
	// Readable by all: it carries no secrets and is read by unprivileged diagnostics.
	if err := atomicfs.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// clone returns a deep copy, so a snapshot handed out by Status() cannot be changed by the
// supervisor later (or the other way round).
func (st Status) clone() Status {
	out := Status{ManifestError: st.ManifestError, Services: make([]ServiceStatus, len(st.Services))}
	for i, s := range st.Services {
		if s.LastExit != nil {
			e := *s.LastExit
			e.LogTail = append([]string(nil), e.LogTail...)
			s.LastExit = &e
		}
		out.Services[i] = s
	}
	return out
}
