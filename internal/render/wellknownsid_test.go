package render

import "testing"

func TestWellKnownSID(t *testing.T) {
	tests := []struct {
		account, sid string
		ok           bool
	}{
		{`NT AUTHORITY\NetworkService`, "S-1-5-20", true}, // the SCM's spelling (render's kube-proxy account)
		{`nt authority\networkservice`, "S-1-5-20", true},
		{`NT AUTHORITY\Network Service`, "S-1-5-20", true},
		{`NetworkService`, "S-1-5-20", true},
		{`NT AUTHORITY\LocalService`, "S-1-5-19", true},
		{`LocalService`, "S-1-5-19", true},
		{`LocalSystem`, "S-1-5-18", true},
		{`.\LocalSystem`, "S-1-5-18", true},
		{`NT AUTHORITY\SYSTEM`, "S-1-5-18", true},
		{`SYSTEM`, "S-1-5-18", true},
		{`BUILTIN\Administrators`, "S-1-5-32-544", true},
		{`Users`, "S-1-5-32-545", true},
		{` NT AUTHORITY\NetworkService `, "S-1-5-20", true},
		{`S-1-5-20`, "S-1-5-20", true},
		{`s-1-5-80-123-456`, "S-1-5-80-123-456", true},
		{`S-1-5-`, "", false},
		{`S-1-5-x`, "", false},
		{`NT SERVICE\kube-proxy`, "", false}, // a virtual account: LookupAccountName resolves it
		{`kubewin`, "", false},
		{`NT AUTHORITY\NetworkServiceX`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		sid, ok := WellKnownSID(tt.account)
		if sid != tt.sid || ok != tt.ok {
			t.Errorf("WellKnownSID(%q) = %q, %v; want %q, %v", tt.account, sid, ok, tt.sid, tt.ok)
		}
	}
}
