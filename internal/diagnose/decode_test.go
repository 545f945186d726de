package diagnose

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

// The FlexVolume line from seed 000, copied verbatim into testdata: a GBK PowerShell error that
// kubelet printed with %q, so GBK bytes became \xNN escapes mixed with \u07b7-style escapes and
// literal runes wherever two GBK bytes happened to form valid UTF-8.
const flexSeed = logsDir + "/signatures/KUBELET-FLEXVOLUME-INIT-OUTPUT.log"

const flexDecoded = `RunFlexVolume : 无法将“RunFlexVolume”项识别为 cmdlet、函数、脚本文件或可运行程序的名称。请检查名称的拼写，如果包括路\r\n径，请确保路径正确，然后再试一次。\r\n所在位置 C:\usr\libexec\kubernetes\kubelet-plugins\volume\exec\microsoft.com~smb.cmd\smb.ps1:89 字符: 1\r\n`

func TestFlexVolumeSeedDecoded(t *testing.T) {
	line, err := os.ReadFile(flexSeed)
	if err != nil {
		t.Fatal(err)
	}
	got := DecodeQuotedStrings(bytes.TrimRight(line, "\n"))
	if !strings.Contains(got, flexDecoded) {
		t.Fatalf("decoded line lacks the PowerShell message:\n got: %s\nwant: …%s…", got, flexDecoded)
	}
	if !strings.HasPrefix(got, `E1114 09:48:35.398102 4496 driver-call.go:267] Failed to unmarshal output for command: init, output: "RunFlexVolume : 无法将“RunFlexVolume”项识别为 cmdlet、`) {
		t.Fatalf("text outside the quoted string changed: %s", got)
	}
	if !strings.HasSuffix(got, `\r\n", error: invalid character 'R' looking for beginning of value`) {
		t.Fatalf("tail after the quoted string changed: %s", got)
	}
	// Through the scanner: the finding's sample is the decoded line.
	r := Scan(context.Background(), mustCatalogue(t), []string{flexSeed}, nil, Options{})
	f, ok := findingIDs(r)["KUBELET-FLEXVOLUME-INIT-OUTPUT"]
	if !ok || !strings.Contains(f.Sample, "无法将“RunFlexVolume”项识别为 cmdlet、函数、脚本文件或可运行程序的名称") {
		t.Fatalf("finding sample not decoded: %+v", f)
	}
	if f.First != "11-14 09:48:35.398102" {
		t.Errorf("first = %q", f.First)
	}
}

func TestUnquoteGoBytesRoundTrip(t *testing.T) {
	gbk, _ := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("无法将“RunFlexVolume”项识别为 cmdlet"))
	for _, b := range [][]byte{
		gbk, []byte("plain ascii \t tab"), []byte("utf-8 文字"), {0, 1, 0x7f, 0x80, 0xff, '"', '\\'},
	} {
		q := fmt.Sprintf("%q", b)
		got, complete := UnquoteGoBytes(q[1 : len(q)-1])
		if !complete || !bytes.Equal(got, b) {
			t.Errorf("UnquoteGoBytes(%s) = %x (complete %v), want %x", q, got, complete, b)
		}
	}
	// Truncated escapes keep the rest and say so.
	got, complete := UnquoteGoBytes(`ab\xc`)
	if complete || string(got) != `ab\xc` {
		t.Errorf("truncated: %q %v", got, complete)
	}
}

func TestSniffEncoding(t *testing.T) {
	utf16le := func(s string, bom bool) []byte {
		p := unicode.IgnoreBOM
		if bom {
			p = unicode.UseBOM
		}
		b, _ := unicode.UTF16(unicode.LittleEndian, p).NewEncoder().Bytes([]byte(s))
		return b
	}
	utf16be, _ := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder().Bytes([]byte("E0101 10:00:00.000000 1 a.go:1] x\r\n"))
	gbk, _ := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("服务 kubelet 运行时间少于 1500 毫秒。\r\n重启将延迟 2000 毫秒。\r\n"))
	tests := []struct {
		name string
		in   []byte
		want Encoding
	}{
		{"utf8", []byte("I0101 10:00:00.000000 1 a.go:1] 你好\n"), EncUTF8},
		{"utf8 bom", append([]byte{0xEF, 0xBB, 0xBF}, "x\n"...), EncUTF8},
		{"utf16le bom", utf16le("kubelet log\r\n", true), EncUTF16LE},
		{"utf16le no bom", utf16le("Event[0]:\r\n  Log Name: System\r\n", false), EncUTF16LE},
		{"utf16be no bom", utf16be, EncUTF16BE},
		{"gbk", gbk, EncGB18030},
		{"binary", []byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0}, EncBinary},
		{"empty", nil, EncUTF8},
		{"one invalid byte in utf8", []byte("E0101 10:00:00.000000 1 a.go:1] \xff mostly ascii 文字 文字\n"), EncUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SniffEncoding(tt.in); got != tt.want {
				t.Errorf("SniffEncoding = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestScanDecodesUTF16AndGBK scans a UTF-16LE kubelet log and a GBK nssm transcript (as
// PowerShell's Out-File and a Chinese console write them) and expects findings with readable
// samples.
func TestScanDecodesUTF16AndGBK(t *testing.T) {
	dir := t.TempDir()
	u16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes(
		[]byte("I0508 08:36:41.082361    3936 server.go:416] Version: v1.17.0\r\nF0421 01:08:30.053087    2668 server.go:485] unable to create proxier: Environment variable KUBE_NETWORK and network-flag not initialized\r\n"))
	gbk, _ := simplifiedchinese.GBK.NewEncoder().Bytes(
		[]byte("E0508 08:36:43.000001    3936 pod_workers.go:1] 创建容器失败: Failed to create pod sandbox: open /etc/resolv.conf: The system cannot find the file specified. 系统找不到指定的文件。\r\n"))
	mustWrite(t, filepath.Join(dir, "kube-proxy.log"), u16)
	mustWrite(t, filepath.Join(dir, "kubelet.err.log"), gbk)
	r := Scan(context.Background(), mustCatalogue(t), []string{dir}, nil, Options{})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	encs := map[string]Encoding{}
	for _, in := range r.Inputs {
		encs[filepath.Base(in.Name)] = in.Encoding
	}
	if encs["kube-proxy.log"] != EncUTF16LE || encs["kubelet.err.log"] != EncGB18030 {
		t.Errorf("encodings = %v", encs)
	}
	ids := findingIDs(r)
	if f, ok := ids["KUBEPROXY-KUBE-NETWORK-UNSET"]; !ok || f.First != "04-21 01:08:30.053087" {
		t.Errorf("UTF-16 finding: %+v", f)
	}
	if f, ok := ids["KUBELET-RESOLV-CONF"]; !ok || !strings.Contains(f.Sample, "创建容器失败") || !strings.Contains(f.Sample, "系统找不到指定的文件") {
		t.Errorf("GBK finding: %+v", f)
	}
}

func TestDecodeTextAlwaysValid(t *testing.T) {
	for _, in := range []string{"\xff\xfe\xfd", "ok", "\xce\xde\xb7\xa8", "a\x00b"} {
		if out := DecodeText([]byte(in)); !utf8.ValidString(out) {
			t.Errorf("DecodeText(%q) = %q: invalid UTF-8", in, out)
		}
	}
}

func mustWrite(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
