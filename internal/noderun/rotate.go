package noderun

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// rotatingWriter appends to a log file and, before a write would make it larger than maxBytes,
// renames it to path.1 (shifting path.1 to path.2 and so on, dropping path.<maxFiles>) and
// starts a new one. Hand-written rather than lumberjack because lumberjack names its backups
// with timestamps, and the node tooling (and people) look for kubelet.log.1.
//
// The file is closed before it is renamed because Windows cannot rename an open file.
type rotatingWriter struct {
	path     string
	maxBytes int64
	maxFiles int // backups kept besides path itself

	mu   sync.Mutex
	f    *os.File
	size int64
}

func openRotating(path string, maxBytes int64, maxFiles int) (*rotatingWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	w := &rotatingWriter{path: path, maxBytes: maxBytes, maxFiles: maxFiles}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *rotatingWriter) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log: %w", err)
	}
	w.f, w.size = f, st.Size()
	return nil
}

// Write starts a new file when p does not fit in the current one, so the chunks the process
// wrote (usually whole lines) stay whole. Only a chunk larger than a whole file is split, to
// keep the size bound hard, and then after its last newline that fits.
func (w *rotatingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, fmt.Errorf("write %s: log closed", w.path)
	}
	written := 0
	for len(p) > 0 {
		if w.size > 0 && w.size+int64(len(p)) > w.maxBytes {
			if err := w.rotate(); err != nil {
				return written, err
			}
		}
		chunk := p
		if room := max(w.maxBytes-w.size, 1); int64(len(chunk)) > room {
			chunk = chunk[:room]
			// Split after the last line that fits, unless no line does.
			if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
				chunk = chunk[:i+1]
			}
		}
		n, err := w.f.Write(chunk)
		written += n
		w.size += int64(n)
		if err != nil {
			return written, fmt.Errorf("write %s: %w", w.path, err)
		}
		p = p[n:]
	}
	return written, nil
}

func (w *rotatingWriter) rotate() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close %s for rotation: %w", w.path, err)
	}
	w.f = nil
	if w.maxFiles <= 0 {
		// No backups wanted: start over in place.
		if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", w.path, err)
		}
	} else {
		name := func(i int) string { return w.path + "." + strconv.Itoa(i) }
		if err := os.Remove(name(w.maxFiles)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", w.path, err)
		}
		for i := w.maxFiles - 1; i >= 1; i-- {
			if err := os.Rename(name(i), name(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rotate %s: %w", w.path, err)
			}
		}
		if err := os.Rename(w.path, name(1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate %s: %w", w.path, err)
		}
	}
	return w.open()
}

func (w *rotatingWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// OpenLog opens path for appending, rotated as the services' logs are (path.1 … path.<maxFiles>
// once it would exceed maxBytes): the node service's own log where nothing reads its stderr
// (a Windows service).
func OpenLog(path string, maxBytes int64, maxFiles int) (io.WriteCloser, error) {
	return openRotating(path, maxBytes, maxFiles)
}
