//go:build windows

package winnode

import (
	"context"
	"fmt"

	"golang.org/x/sys/windows"
)

// RestrictACL writes the DACL as SDDL — protected (P: nothing inherited from above), auto-
// inherited (AI), with object- and container-inherit ACEs (OICI) so files and directories
// created below get it — and sets it with SetNamedSecurityInfo, which also propagates it to the
// existing children. FA is full access; FR and FX read and execute; SDDL_FILE_MODIFY is
// composed of read, write, execute and delete. Accounts are resolved to SIDs with
// LookupAccountName (windows.LookupSID).
func (h *WindowsHost) RestrictACL(ctx context.Context, path string, grants ...ACLGrant) error {
	return call0(ctx, func() error {
		sddl := "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
		for _, g := range grants {
			sid, _, _, err := windows.LookupSID("", g.Account)
			if err != nil {
				return fmt.Errorf("restrict %s: account %s: %w", path, g.Account, err)
			}
			switch g.Access {
			case "R":
				sddl += "(A;OICI;FRFX;;;" + sid.String() + ")"
			case "M":
				sddl += "(A;OICI;FRFWFXSD;;;" + sid.String() + ")"
			default:
				return fmt.Errorf("restrict %s: access %q for %s: expected R or M", path, g.Access, g.Account)
			}
		}
		sd, err := windows.SecurityDescriptorFromString(sddl)
		if err != nil {
			return fmt.Errorf("restrict %s: %w", path, err)
		}
		dacl, _, err := sd.DACL()
		if err != nil {
			return fmt.Errorf("restrict %s: %w", path, err)
		}
		err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
			windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
		if err != nil {
			return fmt.Errorf("restrict %s: %w", path, err)
		}
		return nil
	})
}
