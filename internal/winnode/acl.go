package winnode

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// RestrictACL records the protected DACL of path (SYSTEM and Administrators, plus grants).
// The model only records it: tests read it back with ACL; it does not enforce access.
func (h *MemHost) RestrictACL(ctx context.Context, path string, grants ...ACLGrant) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	for _, g := range grants {
		if g.Access != "R" && g.Access != "M" {
			return fmt.Errorf("restrict %s: access %q for %s: expected R or M", path, g.Access, g.Account)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.acls == nil {
		h.acls = map[string][]ACLGrant{}
	}
	h.acls[filepath.Clean(path)] = slices.Clone(grants)
	h.event("acl", path, aclSummary(grants))
	return nil
}

// ACL returns who besides SYSTEM and Administrators may use path, following the protected
// DACLs down from the nearest restricted directory above it; ok is false when no restricted
// DACL covers path (it inherits the volume's, which lets every local user read it).
func (h *MemHost) ACL(path string) (grants []ACLGrant, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if g, found := h.acls[p]; found {
			return slices.Clone(g), true
		}
		if filepath.Dir(p) == p {
			return nil, false
		}
	}
}

func aclSummary(grants []ACLGrant) string {
	parts := []string{"SYSTEM:F", "Administrators:F"}
	for _, g := range grants {
		parts = append(parts, g.Account+":"+g.Access)
	}
	return strings.Join(parts, " ")
}
