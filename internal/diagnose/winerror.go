package diagnose

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Generic decoding of Windows error codes so that a failure no specific signature knows still
// says what was being done and what the code means. Names come from winerror_table.go (winerror.h
// via golang.org/x/sys/windows); the HCS 0xc037xxxx variants are the severity-bit form hcsshim
// uses for the same codes (hcsshim internal/hcs/errors.go: ErrComputeSystemDoesNotExist 0xc037010e).

// decodeWinCode parses "0x803b0010", "0x57", "2151350288" or "-2147024809" and returns the
// canonical hex form and the winerror.h symbol ("" when unknown).
func decodeWinCode(s string) (hex, name string, ok bool) {
	s = strings.TrimSpace(s)
	var v uint64
	var err error
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		v, err = strconv.ParseUint(s[2:], 16, 32)
	case strings.HasPrefix(s, "-"):
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		v = uint64(uint32(int32(n)))
	default:
		v, err = strconv.ParseUint(s, 10, 32)
	}
	if err != nil {
		return "", "", false
	}
	c := uint32(v)
	name = winErrorName(c)
	switch {
	case name != "":
	case c&0xffff0000 == 0x80070000: // HRESULT_FROM_WIN32
		name = winErrorName(c & 0xffff)
	case c&0xffff0000 == 0xc0370000:
		name = winErrorName(c&0x0fffffff | 0x80000000)
	}
	if name == "" {
		name = winErrorNameExtra(c)
	}
	return fmt.Sprintf("0x%x", c), name, true
}

// humanizeWinName turns HCN_E_ADAPTER_NOT_FOUND into "adapter not found".
func humanizeWinName(n string) string {
	for _, p := range []string{"ERROR_", "HCN_E_", "HCS_E_", "STATUS_", "CBS_E_"} {
		n = strings.TrimPrefix(n, p)
	}
	return strings.ToLower(strings.ReplaceAll(n, "_", " "))
}

// describeOp names the component and operation of "hcnCreateEndpoint", "hnsCall",
// "hcsshim::CreateComputeSystem" and similar Win32 API wrappers.
func describeOp(op string) string {
	op = strings.TrimPrefix(op, "hcsshim::")
	comp := ""
	switch {
	case op == "hnsCall":
		return "an HNS (v1 API) request"
	case strings.HasPrefix(op, "hcn"):
		comp, op = "HNS", op[3:]
	case strings.HasPrefix(op, "hns"):
		comp, op = "HNS", op[3:]
	case strings.HasPrefix(op, "hcs"):
		comp, op = "HCS", op[3:]
	default:
		comp = "HCS"
	}
	var words []string
	start := 0
	for i, r := range op {
		if i > 0 && unicode.IsUpper(r) {
			words = append(words, strings.ToLower(op[start:i]))
			start = i
		}
	}
	words = append(words, strings.ToLower(op[start:]))
	return comp + " " + strings.Join(words, " ")
}

// whyOp gives the usual reason an operation of this kind fails on a Kubernetes node.
func whyOp(what string) string {
	switch {
	case strings.Contains(what, "endpoint"):
		return "endpoint calls usually fail because the network they name is gone (reboot or HNS restart) or the address/policy does not fit it"
	case strings.Contains(what, "network"):
		return "network calls usually fail on a name clash with a network left from an earlier run, an adapter already bound to another vSwitch, or settings this Windows build rejects"
	case strings.Contains(what, "load balancer"), strings.Contains(what, "policy"):
		return "load-balancer/policy calls usually fail on stale objects from an earlier kube-proxy, or on a VIP/endpoint that no longer exists"
	case strings.Contains(what, "namespace"):
		return "namespace calls usually fail when the pod's endpoint was removed between the CNI ADD and the container start"
	case strings.HasPrefix(what, "HCS"):
		return "compute-system calls usually fail on an image/host build mismatch, a missing Hyper-V feature, or a container in the wrong state"
	}
	return "the decoded code names what Windows refused"
}

// deriveWinCaptures adds code_name/code_what (from code or a decimal dec) and what/why (from op)
// to captured values, for the generic Windows error signatures.
func deriveWinCaptures(caps map[string]string) {
	if caps == nil {
		return
	}
	src := caps["code"]
	if src == "" {
		src = caps["dec"]
	}
	if hr := caps["hr"]; src == "" && hr != "" {
		// An HRESULT printed as 8 hex digits without 0x (WIL failure records: "%08X").
		src = "0x" + hr
	}
	if src != "" {
		if hex, name, ok := decodeWinCode(src); ok {
			caps["code"] = hex
			if name != "" {
				caps["code_name"] = name
				caps["code_what"] = humanizeWinName(name)
			}
		}
	}
	if op := caps["op"]; op != "" {
		w := describeOp(op)
		caps["what"] = w
		caps["why"] = whyOp(w)
	}
}
