//go:build windows

package winnode

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/windows"

	"github.com/kubewin/kubewin/internal/render"
)

// RestrictACL writes the DACL as SDDL — protected (P: nothing inherited from above) and
// auto-inherited (AI) — and sets it with SetNamedSecurityInfo, which also propagates it to the
// existing children. On a directory the ACEs are object- and container-inherit (OICI) so that
// files and directories created below get them; on a file they are plain: the inheritance flags
// only say what child objects inherit (learn.microsoft.com/windows/win32/secauthz/
// ace-inheritance-rules), and icacls applies them "only to directories" (learn.microsoft.com/
// windows-server/administration/windows-commands/icacls). FA is full access; FR and FX read and
// execute; SDDL_FILE_MODIFY is composed of read, write, execute and delete.
//
// Accounts with a well-known SID (the service accounts, SYSTEM, the builtin groups:
// wellknownsid.go) are written by SID, since LookupAccountName does not resolve the SCM's
// "NT AUTHORITY\NetworkService" and the names it resolves are localized; other accounts are
// resolved with LookupAccountName (windows.LookupSID).
func (h *WindowsHost) RestrictACL(ctx context.Context, path string, grants ...ACLGrant) error {
	return call0(ctx, func() error {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("restrict %s: %w", path, err)
		}
		inherit := ""
		if st.IsDir() {
			inherit = "OICI"
		}
		sddl := "D:PAI(A;" + inherit + ";FA;;;SY)(A;" + inherit + ";FA;;;BA)"
		for _, g := range grants {
			sid, err := accountSID(g.Account)
			if err != nil {
				return fmt.Errorf("restrict %s: account %s: %w", path, g.Account, err)
			}
			rights, ok := render.SDDLRights[g.Access]
			if !ok {
				return fmt.Errorf("restrict %s: access %q for %s: expected R or M", path, g.Access, g.Account)
			}
			sddl += "(A;" + inherit + ";" + rights + ";;;" + sid + ")"
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

// accountSID is the SID string of an account: well-known accounts from their fixed SID
// (validated by ConvertStringSidToSid), others through LookupAccountName.
func accountSID(account string) (string, error) {
	if s, ok := render.WellKnownSID(account); ok {
		sid, err := windows.StringToSid(s)
		if err != nil {
			return "", fmt.Errorf("SID %s: %w", s, err)
		}
		return sid.String(), nil
	}
	sid, _, _, err := windows.LookupSID("", account)
	if err != nil {
		return "", err
	}
	return sid.String(), nil
}
