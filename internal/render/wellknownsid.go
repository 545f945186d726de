package render

import (
	"strings"
)

// wellKnownSIDs are the accounts an ACL effect grants to by SID instead of by name (join's
// winnode RestrictACL and the bundle's Protect-Path alike).
//
// The service accounts are spelled as the SCM wants them ("NT AUTHORITY\NetworkService", the
// spelling ServiceConfig.Account and ACLGrant use), but that name is not one the security
// subsystem resolves: "This account is not recognized by the security subsystem, so you cannot
// specify its name in a call to the LookupAccountName function", and the names it does resolve
// are localized (learn.microsoft.com/windows/win32/services/networkservice-account; the same for
// localservice-account and localsystem-account). Their SIDs are fixed: SECURITY_LOCAL_SYSTEM_RID
// S-1-5-18, SECURITY_LOCAL_SERVICE_RID S-1-5-19, SECURITY_NETWORK_SERVICE_RID S-1-5-20, and the
// builtin groups S-1-5-32-544 (Administrators) and S-1-5-32-545 (Users)
// (learn.microsoft.com/windows/win32/secauthz/well-known-sids;
// learn.microsoft.com/windows-server/identity/ad-ds/manage/understand-security-identifiers).
var wellKnownSIDs = map[string]string{
	`nt authority\system`:          "S-1-5-18",
	`nt authority\localsystem`:     "S-1-5-18",
	`localsystem`:                  "S-1-5-18",
	`.\localsystem`:                "S-1-5-18",
	`system`:                       "S-1-5-18",
	`nt authority\localservice`:    "S-1-5-19",
	`nt authority\local service`:   "S-1-5-19",
	`localservice`:                 "S-1-5-19",
	`local service`:                "S-1-5-19",
	`nt authority\networkservice`:  "S-1-5-20",
	`nt authority\network service`: "S-1-5-20",
	`networkservice`:               "S-1-5-20",
	`network service`:              "S-1-5-20",
	`builtin\administrators`:       "S-1-5-32-544",
	`administrators`:               "S-1-5-32-544",
	`builtin\users`:                "S-1-5-32-545",
	`users`:                        "S-1-5-32-545",
}

// WellKnownSID is the SID string of a well-known account name (case-insensitive), or of a SID
// given as one ("S-1-5-20"); ok is false for any other name, which is then looked up with
// LookupAccountName.
func WellKnownSID(account string) (sid string, ok bool) {
	a := strings.TrimSpace(account)
	if len(a) > 4 && strings.EqualFold(a[:4], "S-1-") && sidDigits(a[4:]) {
		return "S-1-" + a[4:], true
	}
	sid, ok = wellKnownSIDs[strings.ToLower(a)]
	return sid, ok
}

// sidDigits says whether s is "<number>-<number>-…", the tail of a SID string after "S-1-".
func sidDigits(s string) bool {
	for _, part := range strings.Split(s, "-") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// SDDLRights are the file rights of an ACL grant's access, in SDDL: "R" read and execute
// (FRFX), "M" modify (read, write, execute, delete). join (winnode RestrictACL) and the bundle
// (install.ps1 Protect-Path) write the same DACL: D:PAI, full access for SYSTEM (SY) and
// Administrators (BA), then the grants; object- and container-inherit (OICI) on directories only.
var SDDLRights = map[string]string{"R": "FRFX", "M": "FRFWFXSD"}
