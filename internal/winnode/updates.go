package winnode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Machine is what the node side of kubewin rollout (internal/upgrade) needs from a Windows host
// besides Host: the node's program files, the OS update installers and a restart. The real one
// is WindowsHost (updates_windows.go, compiled and vetted here, not run); MemHost models it.
type Machine interface {
	// RenameFile renames a file the way Go's os.Rename does on Windows: MoveFileEx with
	// MOVEFILE_REPLACE_EXISTING ($GOROOT/src/internal/syscall/windows/syscall_windows.go
	// Rename). The file of a running program may be renamed (its process keeps running from
	// it under the new name) but not replaced or deleted (see MemHost).
	RenameFile(ctx context.Context, from, to string) error
	// RemoveFile deletes a file; a missing file is not an error.
	RemoveFile(ctx context.Context, path string) error
	// RunInstaller runs an OS update command line (InstallCommand, UninstallCommand) and
	// returns its exit code; err is set only when the command could not be run at all.
	RunInstaller(ctx context.Context, argv []string) (uint32, error)
	// Restart restarts the machine (shutdown.exe /r); it returns once the restart is under way.
	Restart(ctx context.Context) error
	// BootTime is when the machine last started: a later one means it restarted.
	BootTime(ctx context.Context) (time.Time, error)
}

// Exit codes of wusa.exe and DISM.exe that an OS update step acts on. wusa reports the Windows
// Update Agent's result, so its codes are Win32 errors and WUA HRESULTs as unsigned numbers.
const (
	// ExitSuccess: installed (or removed).
	ExitSuccess uint32 = 0
	// ExitRebootRequired is ERROR_SUCCESS_REBOOT_REQUIRED (3010): "The requested operation is
	// successful. Changes will not be effective until the system is rebooted."
	// (learn.microsoft.com/windows/win32/debug/system-error-codes--1700-3999-; Windows
	// Installer's error-codes page counts it, with 1641, as success; golang.org/x/sys/windows
	// zerrors_windows.go has both numbers.)
	ExitRebootRequired uint32 = 3010
	// ExitRebootInitiated is ERROR_SUCCESS_REBOOT_INITIATED (1641): "The requested operation
	// completed successfully. The system will be restarted so the changes can take effect."
	// (system-error-codes--1300-1699-). wusa restarts by itself when /quiet is given without
	// /norestart (support.microsoft.com "Description of the Windows Update Standalone
	// Installer in Windows", 799ba3df-ec7e-b05e-ee13-1cdae8f23b19).
	ExitRebootInitiated uint32 = 1641
	// ExitAlreadyInstalled is WU_S_ALREADY_INSTALLED (0x00240006 = 2359302): "The update to be
	// installed is already installed on the system." (learn.microsoft.com/windows/win32/wua_sdk/
	// wua-success-and-error-codes-)
	ExitAlreadyInstalled uint32 = 0x00240006
	// ExitAlreadyUninstalled is WU_S_ALREADY_UNINSTALLED (0x00240007 = 2359303): "The update to
	// be removed is not installed on the system." (same page)
	ExitAlreadyUninstalled uint32 = 0x00240007
	// ExitNotApplicable is WU_E_NOT_APPLICABLE (0x80240017 = 2149842967): "Operation was not
	// performed because there are no applicable updates." (same page; learn.microsoft.com/
	// windows/deployment/update/windows-update-error-reference)
	ExitNotApplicable uint32 = 0x80240017
)

// InstallCommand is the command line that installs an update package: an .msu with the Windows
// Update Standalone Installer, quietly and without its own restart (`wusa.exe <msu> /quiet
// /norestart`: support.microsoft.com 799ba3df-ec7e-b05e-ee13-1cdae8f23b19), a .cab with DISM
// (`DISM.exe /Online /Add-Package /PackagePath:<cab> /Quiet /NoRestart`:
// learn.microsoft.com/windows-hardware/manufacture/desktop/dism-operating-system-package-
// servicing-command-line-options). The restart is the node service's own, after it has
// recorded that one is due.
func InstallCommand(pkg string) ([]string, error) {
	switch strings.ToLower(filepath.Ext(winBase(pkg))) {
	case ".msu":
		return []string{WusaPath, pkg, "/quiet", "/norestart"}, nil
	case ".cab":
		return []string{DismPath, "/Online", "/Add-Package", "/PackagePath:" + pkg, "/Quiet", "/NoRestart"}, nil
	}
	return nil, fmt.Errorf("OS update %s: want an .msu (wusa) or a .cab (DISM)", pkg)
}

// UninstallCommand removes what InstallCommand installed: `wusa.exe /uninstall /kb:<number>
// /quiet /norestart` for an .msu (wusa takes the KB number without its "KB"), `DISM.exe /Online
// /Remove-Package /PackagePath:<cab> /Quiet /NoRestart` for a .cab (same sources).
func UninstallCommand(kb, pkg string) ([]string, error) {
	switch strings.ToLower(filepath.Ext(winBase(pkg))) {
	case ".msu":
		n := strings.TrimPrefix(strings.ToUpper(kb), "KB")
		if n == "" || strings.Trim(n, "0123456789") != "" {
			return nil, fmt.Errorf("OS update %s: %q is not a KB number", pkg, kb)
		}
		return []string{WusaPath, "/uninstall", "/kb:" + n, "/quiet", "/norestart"}, nil
	case ".cab":
		return []string{DismPath, "/Online", "/Remove-Package", "/PackagePath:" + pkg, "/Quiet", "/NoRestart"}, nil
	}
	return nil, fmt.Errorf("OS update %s: want an .msu (wusa) or a .cab (DISM)", pkg)
}

// The installers, by absolute path: a service's PATH is not to be trusted for what runs as
// SYSTEM.
const (
	WusaPath = `C:\Windows\System32\wusa.exe`
	DismPath = `C:\Windows\System32\Dism.exe`
)

// winBase is the last element of a Windows or slash path.
func winBase(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[i+1:]
	}
	return p
}
