//go:build windows

package winnode

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"
)

// UpdateService changes an installed service's definition (ChangeServiceConfig through
// mgr.Service.UpdateConfig, then its recovery actions and their non-crash flag). The command
// line is quoted as mgr.Mgr.CreateService quotes it (EscapeArg of the binary and of every
// argument), so an updated service reads its arguments as a created one does.
func (h *WindowsHost) UpdateService(ctx context.Context, cfg ServiceConfig) error {
	return call0(ctx, func() error {
		return withService(cfg.Name, func(s *mgr.Service) error {
			c, err := s.Config()
			if err != nil {
				return fmt.Errorf("read service %s: %w", cfg.Name, err)
			}
			cmd := windows.EscapeArg(cfg.Binary)
			for _, a := range cfg.Args {
				cmd += " " + windows.EscapeArg(a)
			}
			c.BinaryPathName, c.DisplayName, c.Description = cmd, cfg.DisplayName, cfg.Description
			// An empty account or dependency list would be NULL to ChangeServiceConfig, which
			// keeps the old value: name LocalSystem, and clear dependencies below.
			c.Dependencies, c.ServiceStartName = cfg.DependsOn, cfg.Account
			if c.ServiceStartName == "" {
				c.ServiceStartName = "LocalSystem"
			}
			c.StartType = mgr.StartManual
			if cfg.StartType == StartAutomatic {
				c.StartType = mgr.StartAutomatic
			}
			if err := s.UpdateConfig(c); err != nil {
				return fmt.Errorf("update service %s: %w", cfg.Name, err)
			}
			if len(cfg.DependsOn) == 0 {
				// lpDependencies "" (an empty double-NUL-terminated list) removes every
				// dependency; NULL, what mgr passes for none, leaves them (ChangeServiceConfigW,
				// learn.microsoft.com/windows/win32/api/winsvc/nf-winsvc-changeserviceconfigw).
				none := []uint16{0, 0}
				if err := windows.ChangeServiceConfig(s.Handle, windows.SERVICE_NO_CHANGE, windows.SERVICE_NO_CHANGE,
					windows.SERVICE_NO_CHANGE, nil, nil, nil, &none[0], nil, nil, nil); err != nil {
					return fmt.Errorf("clear the dependencies of service %s: %w", cfg.Name, err)
				}
			}
			if len(cfg.Recovery) == 0 {
				return nil
			}
			actions := make([]mgr.RecoveryAction, len(cfg.Recovery))
			for i, d := range cfg.Recovery {
				actions[i] = mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: d}
			}
			if err := s.SetRecoveryActions(actions, uint32(cfg.RecoveryReset/time.Second)); err != nil {
				return fmt.Errorf("recovery actions of service %s: %w", cfg.Name, err)
			}
			// As InstallService: the actions apply also when the process exits with an error, not
			// only on a crash (SERVICE_FAILURE_ACTIONS_FLAG, ChangeServiceConfig2; sc.exe
			// failureflag 1 in services/install.ps1), so an adopted service that had the flag
			// off gets it too.
			if err := s.SetRecoveryActionsOnNonCrashFailures(true); err != nil {
				return fmt.Errorf("recovery actions of service %s: %w", cfg.Name, err)
			}
			return nil
		})
	})
}
