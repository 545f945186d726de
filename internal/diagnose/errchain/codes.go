package errchain

import (
	"regexp"
	"sort"
	"strings"
)

// errnoTexts are the messages Go's syscall package prints for errno values on Linux
// (golang.org/x/sys/unix zerrors_linux.go errorList, the same strings as glibc's strerror), the
// ones infrastructure logs carry, and the net package's timeouts. Matched case-insensitively.
var errnoTexts = []struct{ text, name string }{
	{"no such file or directory", "ENOENT"},
	{"permission denied", "EACCES"},
	{"operation not permitted", "EPERM"},
	{"connection refused", "ECONNREFUSED"},
	{"connection reset by peer", "ECONNRESET"},
	{"address already in use", "EADDRINUSE"},
	{"cannot assign requested address", "EADDRNOTAVAIL"},
	{"no route to host", "EHOSTUNREACH"},
	{"network is unreachable", "ENETUNREACH"},
	{"device or resource busy", "EBUSY"},
	{"file exists", "EEXIST"},
	{"no space left on device", "ENOSPC"},
	{"too many open files", "EMFILE"},
	{"invalid argument", "EINVAL"},
	{"not a directory", "ENOTDIR"},
	{"is a directory", "EISDIR"},
	{"read-only file system", "EROFS"},
	{"no such device", "ENODEV"},
	{"no such process", "ESRCH"},
	{"protocol not supported", "EPROTONOSUPPORT"},
	{"operation not supported", "EOPNOTSUPP"},
	{"cannot allocate memory", "ENOMEM"},
	{"broken pipe", "EPIPE"},
	{"i/o timeout", "ETIMEDOUT"},
	{"connection timed out", "ETIMEDOUT"},
	{"context deadline exceeded", "DeadlineExceeded"},
	{"no such host", "ENOHOST"},
	{"exec format error", "ENOEXEC"},
	{"executable file not found in $path", "ENOENT"},
}

// grpcCodes are google.golang.org/grpc/codes names as status.Error prints them.
var grpcCode = regexp.MustCompile(`rpc error: code = ([A-Za-z]+)`)

// winCode matches numeric Windows codes as components print them: "(0x80070002)", "HRESULT
// 0x803b0013", "Win32: … (0x5)", "error code 0xc0370106", "exit status 0xc0000135".
var winCode = regexp.MustCompile(`\b0[xX][0-9a-fA-F]{1,8}\b`)

var httpStatus = regexp.MustCompile(`(?i)\b(?:status(?: code)?[ =:]+|HTTP/1\.[01] )([1-5][0-9]{2})\b`)

// codes returns the codes in msg in a stable order (kind, value).
func codes(msg string) []Code {
	seen := map[Code]bool{}
	var out []Code
	add := func(c Code) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	lower := strings.ToLower(msg)
	for _, e := range errnoTexts {
		if strings.Contains(lower, e.text) {
			add(Code{Kind: "errno", Value: e.name})
		}
	}
	for _, m := range grpcCode.FindAllStringSubmatch(msg, 4) {
		add(Code{Kind: "grpc", Value: m[1]})
	}
	for _, m := range winCode.FindAllString(msg, 4) {
		// Short hex numbers are Win32 codes only inside parentheses or after "code"; elsewhere
		// they are offsets, flags or memory addresses.
		if len(m) < 10 && !strings.Contains(msg, "("+m+")") && !strings.Contains(lower, "code "+strings.ToLower(m)) {
			continue
		}
		add(Code{Kind: "win32", Value: strings.ToLower(m)})
	}
	for _, m := range httpStatus.FindAllStringSubmatch(msg, 2) {
		add(Code{Kind: "http", Value: m[1]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}
