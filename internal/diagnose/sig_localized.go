package diagnose

import (
	"regexp"
	"strings"
)

// Windows writes Win32 messages in the host's display language; on a Chinese-locale node (the
// seed's own cluster wrote GBK logs, which the reader transcodes to UTF-8) "The system cannot find
// the file specified." reads "系统找不到指定的文件。". Entries keyed on English text also accept the
// common localisations listed here, and these fallbacks map a localised message to its code so an
// otherwise unknown line still gets the code's meaning. The zh-CN texts are Windows' own message
// strings for these codes (FormatMessage, zh-CN language pack).
type localizedMsg struct {
	code, name, zh string
}

func localizedWin32() []localizedMsg {
	return []localizedMsg{
		{"0x2", "ERROR_FILE_NOT_FOUND", "系统找不到指定的文件。"},
		{"0x3", "ERROR_PATH_NOT_FOUND", "系统找不到指定的路径。"},
		{"0x5", "ERROR_ACCESS_DENIED", "拒绝访问。"},
		{"0x20", "ERROR_SHARING_VIOLATION", "另一个程序正在使用此文件，进程无法访问。"},
		{"0x57", "ERROR_INVALID_PARAMETER", "参数错误。"},
		{"0xb7", "ERROR_ALREADY_EXISTS", "当文件已存在时，无法创建该文件。"},
		{"0x490", "ERROR_NOT_FOUND", "找不到元素。"},
	}
}

// Alternations for patterns keyed on English Win32 text.
const (
	reFileNotFound = `(?:The system cannot find the (?:file|path) specified|系统找不到指定的(?:文件|路径)|no such file or directory)`
	reAccessDenied = `(?:Access is denied|拒绝访问)`
)

func localizedSignatures() []Signature {
	var sigs []Signature
	for _, m := range localizedWin32() {
		sigs = append(sigs, Signature{
			ID: "WIN32-ZH-" + strings.ReplaceAll(m.name[len("ERROR_"):], "_", "-"), Component: "windows", Severity: SevError, Fallback: true,
			Title:   "Windows call failed: " + humanizeWinName(m.name) + " (" + m.code + ", Chinese-locale message)",
			Literal: m.zh,
			Pattern: `(?:(?P<op>(?:hcsshim::)?\w+) failed in Win32: ?)?` + regexp.QuoteMeta(m.zh),
			Cause: "Windows answered " + m.name + " (" + m.code + ", \"" + m.zh + "\" is its zh-CN message: " + humanizeWinName(m.name) +
				")[[ to {what}]]. The line comes from a Chinese-locale host; the English text of the same failure is what upstream threads quote.",
			Fix:  "Read the object or path named before the message: it does not exist, is held by another process or is not accessible to the service account. Search for the English message (" + humanizeWinName(m.name) + ") in the runbooks.",
			Refs: []string{refWinErrors},
		})
	}
	return sigs
}
