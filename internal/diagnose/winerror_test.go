package diagnose

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestDecodeWinCode(t *testing.T) {
	for _, tt := range []struct{ in, hex, name string }{
		{"0x803b0010", "0x803b0010", "HCN_E_NETWORK_ALREADY_EXISTS"},
		{"2151350288", "0x803b0010", "HCN_E_NETWORK_ALREADY_EXISTS"}, // sig-windows-tools#249 ErrorCode
		{"2151350319", "0x803b002f", "HCN_E_ADDR_INVALID_OR_RESERVED"},
		{"2147942487", "0x80070057", "ERROR_INVALID_PARAMETER"}, // HRESULT_FROM_WIN32(0x57)
		{"-2147024809", "0x80070057", "ERROR_INVALID_PARAMETER"},
		{"0xc0000409", "0xc0000409", "STATUS_STACK_BUFFER_OVERRUN"}, // NTSTATUS of a crashed program (ntstatus.h)
		{"0x800F081F", "0x800f081f", "CBS_E_SOURCE_MISSING"},        // DISM: feature payload not found
		{"0x490", "0x490", "ERROR_NOT_FOUND"},
		{"0xb7", "0xb7", "ERROR_ALREADY_EXISTS"},
		{"0x22", "0x22", "ERROR_WRONG_DISK"},
		{"0xc037010e", "0xc037010e", "HCS_E_SYSTEM_NOT_FOUND"}, // hcsshim ErrComputeSystemDoesNotExist
		{"0xc0370105", "0xc0370105", "HCS_E_INVALID_STATE"},
		{"0x80370101", "0x80370101", "HCS_E_IMAGE_MISMATCH"},
		{"0x803b7777", "0x803b7777", ""},
	} {
		hex, name, ok := decodeWinCode(tt.in)
		if !ok || hex != tt.hex || name != tt.name {
			t.Errorf("decodeWinCode(%q) = %q %q %v, want %q %q", tt.in, hex, name, ok, tt.hex, tt.name)
		}
	}
	for _, bad := range []string{"", "0x", "0xzz", "99999999999", "abc"} {
		if _, _, ok := decodeWinCode(bad); ok {
			t.Errorf("decodeWinCode(%q) accepted", bad)
		}
	}
}

func TestDescribeOp(t *testing.T) {
	for in, want := range map[string]string{
		"hcnCreateEndpoint":            "HNS create endpoint",
		"hcnCreateLoadBalancer":        "HNS create load balancer",
		"hnsCall":                      "an HNS (v1 API) request",
		"hcsshim::CreateComputeSystem": "HCS create compute system",
	} {
		if got := describeOp(in); got != want {
			t.Errorf("describeOp(%q) = %q, want %q", in, got, want)
		}
	}
}

// An HNS failure no specific entry knows still says what was created and what the code means.
func TestUnknownHNSVariantDecoded(t *testing.T) {
	c := mustCatalogue(t)
	// Real line (flannel-io/flannel#1112) with a code our HNS table has no entry for.
	r := scanLine(c, `E0313 18:02:25.580117    3232 main.go:289] Error registering network: failed to create HNSNetwork cbr0: hnsCall failed in Win32: The wrong diskette is in the drive. (0x22)`)
	f, ok := findingIDs(r)["WIN32-CALL-FAILED"]
	if !ok {
		t.Fatalf("findings %v", keys(findingIDs(r)))
	}
	for _, want := range []string{"HNS (v1 API)", "0x22", "ERROR_WRONG_DISK"} {
		if !strings.Contains(f.Cause, want) {
			t.Errorf("cause %q lacks %q", f.Cause, want)
		}
	}
	r = scanLine(c, `    + CategoryInfo          : NotSpecified: (:) [New-HnsNetwork], Exception ErrorCode=2151350278`)
	if f := findingIDs(r)["WIN32-ERRORCODE-DECIMAL"]; !strings.Contains(f.Cause, "HCN_E_ADAPTER_NOT_FOUND") {
		t.Errorf("decimal code not decoded: %+v", f)
	}
}

func FuzzDecodeWinCode(f *testing.F) {
	for _, s := range []string{"0x803b0010", "2151350288", "-2147024809", "0x", "", "0xc037010e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hex, _, ok := decodeWinCode(s)
		if ok && !strings.HasPrefix(hex, "0x") {
			t.Fatalf("hex %q", hex)
		}
	})
}

// A Chinese-locale node's kubelet (GBK log, as the seed's cluster wrote) gets the same answer as
// an English one.
func TestLocalizedMessages(t *testing.T) {
	c := mustCatalogue(t)
	gbk, err := simplifiedchinese.GBK.NewEncoder().String(`W0420 14:52:48.252143     816 server.go:605] Could not load kubeconfig file /var/lib/kubelet/kubeconfig: GetFileAttributesEx /var/lib/kubelet/kubeconfig: 系统找不到指定的文件。. Using default client config instead.` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	r := Scan(context.Background(), c, []string{"-"}, strings.NewReader(gbk), Options{Workers: 1})
	if _, ok := findingIDs(r)["KUBELET-KUBECONFIG-MISSING"]; !ok {
		t.Errorf("GBK kubeconfig line: findings %v, errors %v", keys(findingIDs(r)), r.Errors)
	}
	r = scanLine(c, `E0912 15:20:00.000001    4120 main.go:1] Error registering network: hcnCreateEndpoint failed in Win32: 找不到元素。`)
	f, ok := findingIDs(r)["WIN32-ZH-NOT-FOUND"]
	if !ok || !strings.Contains(f.Cause, "ERROR_NOT_FOUND (0x490") || !strings.Contains(f.Cause, "HNS create endpoint") {
		t.Errorf("localized 0x490: %+v", f)
	}
}

// A line that is only a Windows code has its decoded code as the innermost reason of its
// unmatched group (an NTSTATUS exception code, a DISM CBS HRESULT).
func TestCodeOnlyLineInnermost(t *testing.T) {
	c := mustCatalogue(t)
	for _, tc := range []struct{ line, want string }{
		{"    Exception code: 0xc0000374\n", "0xc0000374 STATUS_HEAP_CORRUPTION (heap corruption)"},
		{"Enable-WindowsOptionalFeature failed. Error: 0x800f0906\n", "0x800f0906 CBS_E_DOWNLOAD_FAILURE (download failure)"},
	} {
		r := Scan(context.Background(), c, []string{"-"}, strings.NewReader(tc.line), Options{Workers: 1})
		if len(r.Unmatched) != 1 || r.Unmatched[0].Innermost != tc.want {
			t.Errorf("%q: unmatched %+v, want one group with innermost %q", tc.line, r.Unmatched, tc.want)
		}
	}
}
