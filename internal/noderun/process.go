package noderun

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

const (
	// tailLines is how many of the last log lines an exit record keeps.
	tailLines = 20
	// tailLineMax bounds one kept line, so a process that writes one huge line cannot bloat
	// the status file.
	tailLineMax = 512
	// drainWait bounds how long an exit waits for the process's last output to reach the log.
	// Output normally ends with the process; only a leftover child still holding the pipe makes
	// this wait run out.
	drainWait = 2 * time.Second
)

// proc is one started process of a service.
type proc struct {
	svc     string
	cmd     *exec.Cmd
	pid     int
	started time.Time
	tail    *lineTail

	// Set by the waiter before done is closed; read only after done.
	state   *os.ProcessState
	waitErr error
	exited  time.Time
	done    chan struct{}
}

// startProc starts def with its output going, through a pipe, to a rotating log. The pipe is
// created here instead of letting exec.Cmd make one, so that Wait returns when the process
// exits even if a child it left behind still holds the pipe open.
func startProc(def Service, maxBytes int64, maxFiles int, now func() time.Time) (*proc, error) {
	lw, err := openRotating(def.LogFile, maxBytes, maxFiles)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", def.Name, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		lw.Close()
		return nil, fmt.Errorf("start %s: create output pipe: %w", def.Name, err)
	}
	cmd := exec.Command(def.Path, def.Args...)
	cmd.Env = append(os.Environ(), def.Env...) // exec keeps the last value of a repeated key
	cmd.Stdout, cmd.Stderr = pw, pw
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		lw.Close()
		return nil, fmt.Errorf("start %s: %w", def.Name, err)
	}
	pw.Close() // the child has its copy; ours would keep the reader from ever seeing EOF

	p := &proc{svc: def.Name, cmd: cmd, pid: cmd.Process.Pid, started: now(), tail: &lineTail{}, done: make(chan struct{})}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		defer lw.Close()
		defer pr.Close()
		// Keep reading even if the log cannot be written (disk full): a child blocked on a
		// full pipe would hang, which is worse than losing its output.
		io.Copy(io.MultiWriter(p.tail, ignoreErrors{lw}), pr)
	}()
	go func() {
		err := cmd.Wait()
		t := time.NewTimer(drainWait)
		select {
		case <-drained:
		case <-t.C:
		}
		t.Stop()
		p.state, p.waitErr, p.exited = cmd.ProcessState, err, now()
		close(p.done)
	}()
	return p, nil
}

// exitStatus describes how p ended; only valid after p.done is closed.
func (p *proc) exitStatus() *ExitStatus {
	e := &ExitStatus{Code: -1, At: p.exited, LogTail: p.tail.lines()}
	if p.state != nil {
		e.Code = p.state.ExitCode()
		e.Signal = exitSignal(p.state)
	} else if p.waitErr != nil {
		e.Error = p.waitErr.Error()
	}
	return e
}

// ignoreErrors lets io.Copy continue past a failing writer.
type ignoreErrors struct{ w io.Writer }

func (i ignoreErrors) Write(p []byte) (int, error) {
	i.w.Write(p)
	return len(p), nil
}

// lineTail keeps the last tailLines lines written to it.
type lineTail struct {
	mu      sync.Mutex
	ring    []string
	partial []byte
}

func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = appendCapped(t.partial, p)
			break
		}
		t.partial = appendCapped(t.partial, p[:i])
		t.push(string(bytes.TrimRight(t.partial, "\r")))
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func appendCapped(dst, src []byte) []byte {
	if room := tailLineMax - len(dst); room < len(src) {
		src = src[:max(room, 0)]
	}
	return append(dst, src...)
}

func (t *lineTail) push(line string) {
	if len(t.ring) == tailLines {
		copy(t.ring, t.ring[1:])
		t.ring = t.ring[:tailLines-1]
	}
	t.ring = append(t.ring, line)
}

// lines returns the kept lines, including an unterminated last line (often the one that
// explains a crash).
func (t *lineTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.ring...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
		if len(out) > tailLines {
			out = out[1:]
		}
	}
	return out
}
