//go:build windows

package winnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/windows"
)

// Machine on a real Windows host. Compiled and vetted here (GOOS=windows go vet), never run:
// its logic is exercised against MemHost, whose behaviours cite their sources. What only a
// Windows node can confirm: the exit codes wusa.exe and DISM.exe give for each case (MemHost's
// table), and that a running service's program renames but does not delete.

var _ Machine = (*WindowsHost)(nil)

// RenameFile is os.Rename: MoveFileEx(MOVEFILE_REPLACE_EXISTING).
func (h *WindowsHost) RenameFile(ctx context.Context, from, to string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// RemoveFile is os.Remove; a file already gone is not an error.
func (h *WindowsHost) RemoveFile(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// RunInstaller runs wusa.exe or DISM.exe and returns its exit code. wusa exits with the WUA
// result as an unsigned 32-bit number (0x80240017 is 2149842967); Go's ExitCode gives the
// process's DWORD exit code as an int, which holds it on 64-bit Windows.
func (h *WindowsHost) RunInstaller(ctx context.Context, argv []string) (uint32, error) {
	if len(argv) == 0 {
		return 0, errors.New("run installer: empty command line")
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return ExitSuccess, nil
	case errors.As(err, &exit):
		return uint32(exit.ExitCode()), nil
	}
	return 0, fmt.Errorf("run %s: %w: %s", argv[0], err, out)
}

// Restart asks Windows to restart in 10 seconds (shutdown.exe /r /t 10 /c: learn.microsoft.com/
// windows-server/administration/windows-commands/shutdown), time for the node service to have
// written its state and its Node's phase before it is stopped.
func (h *WindowsHost) Restart(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, `C:\Windows\System32\shutdown.exe`, "/r", "/t", "10", "/c", "kubewin: an OS update of this node's revision needs a restart").CombinedOutput()
	if err != nil {
		return fmt.Errorf("shutdown /r: %w: %s", err, out)
	}
	return nil
}

// BootTime is now minus the time since boot (GetTickCount64, through windows.DurationSinceBoot),
// to the second: two readings in one boot differ by the clock's drift only, which the caller
// allows for.
func (h *WindowsHost) BootTime(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return time.Now().Add(-windows.DurationSinceBoot()).UTC().Truncate(time.Second), nil
}
