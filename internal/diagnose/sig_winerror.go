package diagnose

const refWinErrors = "https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes"

// winErrorSignatures: generic fallbacks for Windows API failures no specific entry explains. They
// decode the code (hex, or the decimal HNS/PowerShell records carry) and name the operation, so an
// unknown variant still gets a useful answer. Tried after every specific entry and after the
// HNS code table (sig_hns.go).
func winErrorSignatures() []Signature {
	return []Signature{
		{
			ID: "WIN32-CALL-FAILED", Component: "hns", Severity: SevError, Fallback: true,
			Title:   "Windows API call failed (decoded)",
			Literal: "failed in Win32",
			Pattern: `(?P<op>(?:hcsshim::)?\w+) failed in Win32: ?(?P<message>[^(\\"]*?) ?\((?P<code>0x[0-9a-fA-F]+)\)`,
			Cause:   "{what} failed with {code}[[ ({code_name}: {code_what})]] — \"{message}\". Typical reasons: {why}.",
			Fix: "Inspect the object named in the line (Get-HnsNetwork / Get-HnsEndpoint / hnsdiag list all, or crictl/ctr for containers); " +
				"if it was left by an earlier run remove it, if HNS restarted restart the CNI agent and kube-proxy; collect logs with " +
				"microsoft/SDN collectlogs.ps1 when it repeats.",
			Refs: []string{refHCNErrors, refWinErrors},
		},
		{
			// HNS JSON responses and PowerShell error records carry the HRESULT in decimal:
			// {"Success":false,"Error":"...","ErrorCode":2151350288}, "ErrorCode=2151350278".
			ID: "WIN32-ERRORCODE-DECIMAL", Component: "hns", Severity: SevError, Fallback: true,
			Title:   "HNS/HCS request failed (decimal error code decoded)",
			Literal: "ErrorCode",
			// The PowerShell hashtable form "@{Error=<text>; ErrorCode=<n>; Success=False}" and the
			// JSON form "\"Error\":\"<text>\",\"ErrorCode\":<n>" also carry HNS's message.
			Pattern: `(?:(?:\bError=(?P<message>[^;}]+?)\s*;\s*)|(?:"Error\\?"\s*:\s*\\?"(?P<message>[^"\\]+)\\?",\s*\\?"))?ErrorCode\\?"?\s*[=:]\s*(?P<dec>-?\d{7,10})`,
			Cause:   "A Windows host-networking/compute request failed with {code}[[ ({code_name}: {code_what})]][[ — \"{message}\"]] (written in decimal in the record).",
			Fix: "Look up the object the record names (Get-HnsNetwork / Get-HnsEndpoint), remove stale ones or restart hns and the CNI agent; " +
				"the HNS code table (kubewin diagnose --list-signatures) explains the common codes.",
			Refs: []string{refHCNErrors},
		},
		{
			// hcsshim/HNS callers print the HRESULT in decimal too: "HRESULT: 2147942402. Result:
			// {\"Success\":false,\"Error\":\"<text>\"}" (the HNS JSON answer follows).
			ID: "WIN32-HRESULT-DECIMAL", Component: "hns", Severity: SevError, Fallback: true,
			Title:   "Windows request failed (decimal HRESULT decoded)",
			Literal: "HRESULT",
			Pattern: `HRESULT:?\s*(?P<dec>-?\d{7,10})(?:.*?"Error\\?"\s*:\s*\\?"(?P<message>[^"\\]+))?`,
			Cause:   "A Windows host-networking/compute request failed with HRESULT {code}[[ ({code_name}: {code_what})]][[ — \"{message}\"]] (written in decimal in the line).",
			Fix: "Look up the object the line names (Get-HnsNetwork / Get-HnsEndpoint, hnsdiag list all); remove stale objects or restart " +
				"hns and the CNI agent; collect logs with microsoft/SDN collectlogs.ps1 when it repeats.",
			Refs: []string{refHCNErrors, refWinErrors},
		},
	}
}
