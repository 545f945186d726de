package diagnose

// Codes outside winerror_table.go's generated range that Windows nodes print on their own: the
// NTSTATUS exception codes of crashed programs (Application event 1000, "Exception code: 0x…";
// ntstatus.h, https://learn.microsoft.com/openspecs/windows_protocols/ms-erref/596a1078-e883-4972-9bbc-49e60bebca55)
// and the component-servicing (CBS) HRESULTs that DISM, Install-WindowsFeature and
// Enable-WindowsOptionalFeature return (winerror.h FACILITY_SETUPAPI 0x800f08xx,
// https://learn.microsoft.com/windows-hardware/manufacture/desktop/dism-error-codes).
func winErrorNameExtra(code uint32) string {
	switch code {
	case 0xc0000005:
		return "STATUS_ACCESS_VIOLATION"
	case 0xc0000017:
		return "STATUS_NO_MEMORY"
	case 0xc000007b:
		return "STATUS_INVALID_IMAGE_FORMAT"
	case 0xc00000fd:
		return "STATUS_STACK_OVERFLOW"
	case 0xc0000135:
		return "STATUS_DLL_NOT_FOUND"
	case 0xc0000139:
		return "STATUS_ENTRYPOINT_NOT_FOUND"
	case 0xc000013a:
		return "STATUS_CONTROL_C_EXIT"
	case 0xc0000142:
		return "STATUS_DLL_INIT_FAILED"
	case 0xc0000374:
		return "STATUS_HEAP_CORRUPTION"
	case 0xc0000409:
		return "STATUS_STACK_BUFFER_OVERRUN"
	case 0x800f081f:
		return "CBS_E_SOURCE_MISSING"
	case 0x800f0906:
		return "CBS_E_DOWNLOAD_FAILURE"
	case 0x800f0907:
		return "CBS_E_GROUPPOLICY_DISALLOWED"
	case 0x800f0922:
		return "CBS_E_INSTALLERS_FAILED"
	}
	return ""
}
