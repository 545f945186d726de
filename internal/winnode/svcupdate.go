package winnode

import (
	"context"
	"fmt"
	"slices"
)

// UpdateService replaces the definition of an installed service (its command line,
// dependencies, start type, account, recovery); a running service keeps running with the old
// one until it is restarted, as with the SCM's ChangeServiceConfig.
func (h *MemHost) UpdateService(ctx context.Context, cfg ServiceConfig) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.services[cfg.Name]
	if s == nil {
		return fmt.Errorf("update service %s: %w", cfg.Name, ErrServiceNotInstalled)
	}
	cfg.Args, cfg.DependsOn, cfg.Recovery = slices.Clone(cfg.Args), slices.Clone(cfg.DependsOn), slices.Clone(cfg.Recovery)
	s.cfg = cfg
	h.event("service-update", cfg.Name, "")
	return nil
}

// ServiceDefinition is the definition an installed service has (tests inspect what join
// installed).
func (h *MemHost) ServiceDefinition(name string) (ServiceConfig, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.services[name]
	if s == nil {
		return ServiceConfig{}, false
	}
	cfg := s.cfg
	cfg.Args, cfg.DependsOn, cfg.Recovery = slices.Clone(cfg.Args), slices.Clone(cfg.DependsOn), slices.Clone(cfg.Recovery)
	return cfg, true
}
