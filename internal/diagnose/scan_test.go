package diagnose

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"

	"github.com/kubewin/kubewin/bench/diagnose/mixgen"
)

const (
	lineLB      = `E0425 01:27:31.053862    8064 proxier.go:1231] Policy creation failed: hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013) {"Success":false}`
	lineNet     = "F0421 01:08:30.053087    2668 server.go:485] unable to create proxier: Environment variable KUBE_NETWORK and network-flag not initialized"
	lineInfo    = "I0508 08:36:44.382054    3936 status_manager.go:157] Starting to sync pod status with apiserver"
	lineUnknown = `E0508 08:36:44.480010    3936 kuberuntime_manager.go:815] "CreatePodSandbox for pod failed" err="something nobody has catalogued" pod="default/web-0"`
)

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zipOf(t testing.TB, files map[string][]byte, order []string) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range order {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(files[name])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tarGz(t testing.TB, files map[string][]byte, order []string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range order {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[name])), Typeflag: tar.TypeReg})
		tw.Write(files[name])
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func scanDir(t testing.TB, opt Options, inputs ...string) *Report {
	t.Helper()
	return Scan(context.Background(), mustCatalogue(t), inputs, nil, opt)
}

// TestScanBundles: a collectlogs-style zip with a nested .gz member, and a .tar.gz bundle.
func TestScanBundles(t *testing.T) {
	dir := t.TempDir()
	zfiles := map[string][]byte{
		"node009/kubeproxy.log":      lines(lineInfo, lineLB, lineInfo),
		"node009/kubelet.log.1.gz":   gz(t, lines(lineInfo, lineUnknown)),
		"node009/hns/hnsdiag.txt":    lines("IsRemoteEndpoint   : True"),
		"node009/containerd.exe.bin": {0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0},
	}
	mustWrite(t, filepath.Join(dir, "logs.zip"), zipOf(t, zfiles, []string{"node009/kubeproxy.log", "node009/kubelet.log.1.gz", "node009/hns/hnsdiag.txt", "node009/containerd.exe.bin"}))
	tfiles := map[string][]byte{"var/log/kube-proxy.log": lines(lineNet)}
	mustWrite(t, filepath.Join(dir, "linux.tar.gz"), tarGz(t, tfiles, []string{"var/log/kube-proxy.log"}))

	r := scanDir(t, Options{}, dir)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	ids := findingIDs(r)
	lb, ok := ids["KUBEPROXY-LB-PORT-EXISTS"]
	if !ok || lb.Files[0] != (Location{Input: filepath.Join(dir, "logs.zip") + "!node009/kubeproxy.log", Line: 2}) {
		t.Fatalf("LB finding: %+v", lb)
	}
	if _, ok := ids["KUBEPROXY-KUBE-NETWORK-UNSET"]; !ok {
		t.Errorf("tar.gz member not scanned: %v", keys(ids))
	}
	if _, ok := ids["CNI-REMOTE-ENDPOINT-1909"]; !ok {
		t.Errorf("nested dir member not scanned")
	}
	if len(r.Unmatched) != 1 || r.Unmatched[0].At.Input != filepath.Join(dir, "logs.zip")+"!node009/kubelet.log.1.gz" || r.Unmatched[0].At.Line != 2 {
		t.Errorf("unmatched from gz member: %+v", r.Unmatched)
	}
	if len(r.Skipped) != 1 || !strings.HasSuffix(r.Skipped[0].Input, "containerd.exe.bin") || !strings.Contains(r.Skipped[0].Err, "binary") {
		t.Errorf("skipped: %+v", r.Skipped)
	}
}

func TestScanStdin(t *testing.T) {
	in := strings.NewReader("Events:\n  Type     Reason             Age        From               Message\n  ----     ------             ----       ----               -------\n" +
		`  Warning  MissingClusterDNS  6m58s (x3 over 7m)     kubelet, node009   pod: "iis-test_default(0ee7)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.` + "\n")
	r := Scan(context.Background(), mustCatalogue(t), []string{"-"}, in, Options{})
	f, ok := findingIDs(r)["KUBELET-MISSING-CLUSTER-DNS"]
	if !ok || f.Count != 3 || len(f.Nodes) != 1 || f.Nodes[0] != "node009" || f.Files[0].Input != "<stdin>" || f.Files[0].Line != 4 {
		t.Fatalf("stdin finding: %+v", f)
	}
	if !strings.Contains(f.Fix, "clusterDNS") || !strings.Contains(f.Cause, "ClusterFirst") {
		t.Errorf("fix/cause not rendered: %q %q", f.Cause, f.Fix)
	}
}

// TestScanBadInput: truncated gzip and zip, binary garbage, an unreadable path and an empty file
// are reported precisely, and the good input next to them is still analysed.
func TestScanBadInput(t *testing.T) {
	dir := t.TempDir()
	var many []string
	for i := 0; i < 20000; i++ {
		many = append(many, lineInfo)
	}
	many = append([]string{lineLB}, many...)
	full := gz(t, lines(many...))
	mustWrite(t, filepath.Join(dir, "cut.log.gz"), full[:len(full)/2])
	z := zipOf(t, map[string][]byte{"a.log": lines(lineNet)}, []string{"a.log"})
	mustWrite(t, filepath.Join(dir, "cut.zip"), z[:len(z)-30])
	mustWrite(t, filepath.Join(dir, "garbage.bin"), []byte("\x00\x01\x02\x03\xff\xfe\x00\x00garbage"))
	mustWrite(t, filepath.Join(dir, "empty.log"), nil)
	mustWrite(t, filepath.Join(dir, "good.log"), lines(lineNet))
	mustWrite(t, filepath.Join(dir, "etl.gz"), gz(t, []byte("\x00\x00\x01\x02binary trace\x00")))

	inputs := []string{filepath.Join(dir, "cut.log.gz"), filepath.Join(dir, "cut.zip"), filepath.Join(dir, "garbage.bin"),
		filepath.Join(dir, "missing.log"), filepath.Join(dir, "empty.log"), filepath.Join(dir, "good.log"), filepath.Join(dir, "etl.gz")}
	r := scanDir(t, Options{}, inputs...)
	errs := map[string]InputError{}
	for _, e := range r.Errors {
		errs[filepath.Base(e.Input)] = e
	}
	if e := errs["cut.log.gz"]; e.Line == 0 || !strings.Contains(e.Err, "unexpected end of data") {
		t.Errorf("truncated gzip: %+v", e)
	}
	if e := errs["cut.zip"]; !strings.Contains(e.Err, "zip:") {
		t.Errorf("truncated zip: %+v", e)
	}
	if e := errs["garbage.bin"]; !strings.Contains(e.Err, "binary") {
		t.Errorf("binary: %+v", e)
	}
	if e := errs["missing.log"]; !strings.Contains(e.Err, "no such file") {
		t.Errorf("missing: %+v", e)
	}
	if e := errs["etl.gz"]; !strings.Contains(e.Err, "binary") {
		t.Errorf("binary inside a named .gz: %+v", e)
	}
	if _, ok := errs["empty.log"]; ok || len(r.Errors) != 5 {
		t.Errorf("errors: %+v", r.Errors)
	}
	ids := findingIDs(r)
	if _, ok := ids["KUBEPROXY-LB-PORT-EXISTS"]; !ok {
		t.Errorf("line before the gzip cut not analysed")
	}
	if _, ok := ids["KUBEPROXY-KUBE-NETWORK-UNSET"]; !ok {
		t.Errorf("good input not analysed after bad ones")
	}
}

// TestScanLongLines: a line of several MB is cut at ChunkSize, reported, and does not disturb
// line numbers or the lines after it.
func TestScanLongLines(t *testing.T) {
	dir := t.TempDir()
	long := lineNet + " " + strings.Repeat("x", 5<<20) + " " + "open /etc/resolv.conf: The system cannot find the file specified"
	mustWrite(t, filepath.Join(dir, "long.log"), lines(lineInfo, long, lineInfo, lineLB))
	r := scanDir(t, Options{ChunkSize: 64 << 10}, dir)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	ids := findingIDs(r)
	if f := ids["KUBEPROXY-KUBE-NETWORK-UNSET"]; f.Count != 1 || f.Files[0].Line != 2 || len(f.Sample) > maxSample+100 {
		t.Errorf("long line head: count %d at %+v, sample %d bytes", f.Count, f.Files, len(f.Sample))
	}
	if _, ok := ids["KUBELET-RESOLV-CONF"]; ok {
		t.Errorf("text beyond the cut must not be matched (it is reported as truncated)")
	}
	if f := ids["KUBEPROXY-LB-PORT-EXISTS"]; f.Files[0].Line != 4 {
		t.Errorf("line after the long line: %+v", f.Files)
	}
	if in := r.Inputs[0]; in.Lines != 4 || len(in.TruncatedLines) != 1 || in.TruncatedLines[0] != 2 {
		t.Errorf("input summary: %+v", in)
	}
}

func TestScanInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "bad.log"), lines(lineNet+" \xff\xfe\x80 tail", "E0101 00:00:00.000000 1 x.go:1] broken \xc3\x28 bytes"))
	r := scanDir(t, Options{}, dir)
	f := findingIDs(r)["KUBEPROXY-KUBE-NETWORK-UNSET"]
	if !utf8.ValidString(f.Sample) || f.Count != 1 {
		t.Errorf("sample %q", f.Sample)
	}
	if len(r.Unmatched) != 1 || !utf8.ValidString(r.Unmatched[0].Key) || !utf8.ValidString(r.Unmatched[0].Sample) {
		t.Errorf("unmatched %+v", r.Unmatched)
	}
}

// TestUnmatchedGrouping: E/F lines no signature explains are grouped by a normalised key.
func TestUnmatchedGrouping(t *testing.T) {
	dir := t.TempDir()
	var ls []string
	for i := 0; i < 5; i++ {
		ls = append(ls, fmt.Sprintf(`E0508 08:36:4%d.48%04d    3936 kubelet.go:2263] "Error syncing pod" pod="default/web-%d" podUID=%08x-61fa-401b-8433-84c7e48752f2 err="timeout after %ds"`, i, i, i, i*7919, i+1))
	}
	ls = append(ls, "E0508 08:37:00.000000    3936 other.go:1] something else", lineInfo, "W0508 08:37:00.000000    3936 w.go:1] warnings are not errors")
	mustWrite(t, filepath.Join(dir, "k.log"), lines(ls...))
	r := scanDir(t, Options{}, dir)
	if len(r.Unmatched) != 2 || r.Unmatched[0].Count != 5 || r.Unmatched[1].Count != 1 {
		t.Fatalf("groups: %+v", r.Unmatched)
	}
	u := r.Unmatched[0]
	if u.First != "05-08 08:36:40.480000" || u.Last != "05-08 08:36:44.480004" || u.At.Line != 1 {
		t.Errorf("group bounds: %+v", u)
	}
	if !strings.HasPrefix(u.Key, `kubelet.go:2263] "Error syncing pod" pod="default/web-N" podUID=H err="timeout after Ns"`) {
		t.Errorf("key %q", u.Key)
	}
}

// TestScanDeterministic: worker count and chunk size do not change a single byte of the report.
func TestScanDeterministic(t *testing.T) {
	dir := t.TempDir()
	var ls []string
	for i := 0; i < 3000; i++ {
		switch i % 97 {
		case 3:
			ls = append(ls, lineLB)
		case 50:
			ls = append(ls, fmt.Sprintf("E0508 08:%02d:00.000000 1 x.go:%d] failure %d", i%60, i%7, i))
		default:
			ls = append(ls, lineInfo)
		}
	}
	mustWrite(t, filepath.Join(dir, "a.log"), lines(ls...))
	mustWrite(t, filepath.Join(dir, "b", "c.log"), lines(ls[:1000]...))
	var outs []string
	for _, opt := range []Options{{Workers: 1}, {Workers: 4, ChunkSize: 4096}, {Workers: 3, ChunkSize: 5000}} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, scanDir(t, opt, dir)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, buf.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Fatalf("reports differ between worker/chunk settings")
	}
	r := scanDir(t, Options{Workers: 4, ChunkSize: 4096}, dir)
	if f := findingIDs(r)["KUBEPROXY-LB-PORT-EXISTS"]; f.Count != 31+11 || f.Files[0].Line != 4 || len(f.Files) != 2 {
		t.Errorf("LB finding across chunks: count %d files %+v", f.Count, f.Files)
	}
}

// TestEventLogExport: a wevtutil /f:text export carries the time and level on header lines.
func TestEventLogExport(t *testing.T) {
	export := `Event[0]:
  Log Name: System
  Source: Service Control Manager
  Date: 2024-09-12T14:00:01.1230000Z
  Event ID: 7031
  Task: N/A
  Level: Error
  Opcode: N/A
  Keyword: Classic
  User: N/A
  User Name: N/A
  Computer: node009
  Description:
The kubelet service terminated unexpectedly.  It has done this 2 time(s).  The following corrective action will be taken in 10000 milliseconds: Restart the service.

Event[1]:
  Log Name: Application
  Source: nssm
  Date: 2024-09-12T14:00:05.0000000Z
  Event ID: 1040
  Level: Error
  Description:
Unexpected thing 42 happened to service kube-proxy.
Second description line.

Event[2]:
  Log Name: Application
  Source: nssm
  Date: 2024-09-12T14:00:09.0000000Z
  Level: Warning
  Description:
Service kubelet ran for less than 1500 milliseconds.
Restart will be delayed by 2000 milliseconds.
`
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "system.txt"), []byte(strings.ReplaceAll(export, "\n", "\r\n")))
	r := scanDir(t, Options{Workers: 4, ChunkSize: 4096}, dir)
	ids := findingIDs(r)
	f, ok := ids["SERVICE-TERMINATED-UNEXPECTEDLY"]
	if !ok || f.First != "2024-09-12T14:00:01.123Z" || f.Captures["service"] != "kubelet" || !strings.Contains(f.Fix, "sc qc kubelet") {
		t.Errorf("SCM finding: %+v", f)
	}
	if f, ok := ids["NSSM-THROTTLED"]; !ok || f.First != "2024-09-12T14:00:09Z" {
		t.Errorf("nssm finding: %+v", f)
	}
	if len(r.Unmatched) != 1 || !strings.HasPrefix(r.Unmatched[0].Sample, "Unexpected thing 42") || r.Unmatched[0].First != "2024-09-12T14:00:05Z" {
		t.Errorf("unmatched event: %+v", r.Unmatched)
	}
}

func TestNormalizeKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"dial tcp 10.0.0.1:6443: i/o timeout", "dial tcp N: i/o timeout"},
		{"container 485cc61b9dd9 died after 12s", "container H died after Ns"},
		{"x509: node009 ok", "xN: nodeN ok"}, {"uuid 00000000-61fa-401b-8433-84c7e48752f2 at 10.0.0.1:6443", "uuid H at N"}, {"pod abcdefab-cdef-abcd-efab-cdefabcdefab and deadbeefcafebabe", "pod H and H"}, {"face-off at bead", "face-off at bead"},
	}
	for _, tt := range tests {
		if got := normalizeKey([]byte(tt.in)); got != tt.want {
			t.Errorf("normalizeKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriteText(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "k.log"), lines(lineLB, lineUnknown, "E0508 08:36:43.672910    3936 server.go:749] kubelet needs to run as uid `0`. It is being run as -1"))
	r := scanDir(t, Options{}, dir, filepath.Join(dir, "nope.log"))
	var buf bytes.Buffer
	if err := WriteText(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"ERROR   KUBEPROXY-LB-PORT-EXISTS  [kube-proxy]", "count   1   first 04-25 01:27:31.053862",
		"fix     List and remove stale load balancers", "Known noise", "KUBELET-RUN-AS-UID-WINDOWS",
		"Unmatched error lines", "k.log:2", "Inputs that could not be read", "nope.log: stat",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgress: progress lines appear only above the size threshold.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	var ls []string
	for i := 0; i < 40000; i++ {
		ls = append(ls, lineInfo)
	}
	mustWrite(t, filepath.Join(dir, "big.log"), lines(ls...))
	var quiet lockedBuffer
	scanDir(t, Options{Progress: &quiet}, dir)
	if quiet.String() != "" {
		t.Errorf("progress below the 100 MB threshold: %q", quiet.String())
	}
	var loud lockedBuffer
	scanDir(t, Options{Progress: &loud, ProgressMin: 1, ProgressEvery: time.Microsecond, ChunkSize: 4096, Workers: 1}, dir)
	if out := loud.String(); !strings.Contains(out, "diagnose: ") || !strings.Contains(out, " MiB (") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress output %q", out)
	}
}

// TestEventLogFormatList: Get-WinEvent | Format-List output, written by PowerShell as UTF-16LE.
func TestEventLogFormatList(t *testing.T) {
	export := "\r\n\r\nTimeCreated      : 9/12/2024 2:00:01 PM\r\nProviderName     : Service Control Manager\r\nId               : 7031\r\nLevelDisplayName : Error\r\n" +
		"Message          : The kube-proxy service terminated unexpectedly.  It has done this 4 time(s).  The following corrective\r\n                   action will be taken in 60000 milliseconds: Restart the service.\r\n\r\n" +
		"TimeCreated      : 9/12/2024 2:01:00 PM\r\nProviderName     : nssm\r\nId               : 1000\r\nLevelDisplayName : Error\r\nMessage          : Something unexpected 17 happened.\r\n"
	u16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(export))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "events.txt"), u16)
	r := scanDir(t, Options{}, dir)
	f, ok := findingIDs(r)["SERVICE-TERMINATED-UNEXPECTEDLY"]
	if !ok || f.First != "2024-09-12T14:00:01Z" || f.Captures["service"] != "kube-proxy" {
		t.Errorf("finding %+v", f)
	}
	if len(r.Unmatched) != 1 || r.Unmatched[0].First != "2024-09-12T14:01:00Z" || !strings.Contains(r.Unmatched[0].Key, "Something unexpected N happened") {
		t.Errorf("unmatched %+v", r.Unmatched)
	}
}

// TestUnmatchedLogrus: containerd errors no signature explains are grouped by their message.
func TestUnmatchedLogrus(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "containerd.log"), lines(
		`time="2024-09-12T14:00:00.000000001Z" level=info msg="starting containerd"`,
		`time="2024-09-12T14:00:01.000000001Z" level=error msg="failed to stat snapshot 12" error="boom"`,
		`time="2024-09-12T14:00:02.000000001Z" level=error msg="failed to stat snapshot 345" error="boom"`,
		`time="2024-09-12T14:00:03.000000001Z" level=warning msg="something mild"`,
	))
	r := scanDir(t, Options{}, dir)
	if len(r.Unmatched) != 1 {
		t.Fatalf("unmatched %+v", r.Unmatched)
	}
	u := r.Unmatched[0]
	if u.Count != 2 || u.Key != `"failed to stat snapshot N" error="boom"` || u.First != "2024-09-12T14:00:01.000000001Z" || u.Last != "2024-09-12T14:00:02.000000001Z" {
		t.Errorf("group %+v", u)
	}
}

// TestEventLogCSV: Get-WinEvent | Export-Csv rows carry time and level; unknown errors are grouped.
func TestEventLogCSV(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "system.csv"), lines(
		`"TimeCreated","Id","LevelDisplayName","Message","ProviderName"`,
		`"9/12/2024 2:00:01 PM","7031","Error","The kubelet service terminated unexpectedly.  It has done this 2 time(s).","Service Control Manager"`,
		`"9/12/2024 2:00:05 PM","7023","Error","The Foo service terminated with the following error: 42","Service Control Manager"`,
		`"9/12/2024 2:00:06 PM","7036","Information","The Foo service entered the stopped state.","Service Control Manager"`,
	))
	r := scanDir(t, Options{}, dir)
	if f, ok := findingIDs(r)["SERVICE-TERMINATED-UNEXPECTEDLY"]; !ok || f.First != "2024-09-12T14:00:01Z" {
		t.Errorf("finding %+v", f)
	}
	if len(r.Unmatched) != 1 || r.Unmatched[0].First != "2024-09-12T14:00:05Z" || r.Unmatched[0].At.Line != 3 {
		t.Errorf("unmatched %+v", r.Unmatched)
	}
}

// TestMixGrouping: the benchmark mix has four templates of unknown errors with varying ids,
// numbers, UUIDs and IPs; the HNS one (0x1392) is now explained by the generic Win32 decoder
// (WIN32-CALL-FAILED), each other must form exactly one group, and every known failure must fire.
func TestMixGrouping(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mix.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := mixgen.Write(f, 4<<20, 3, 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := scanDir(t, Options{}, p)
	if len(r.Unmatched) != 3 {
		for _, u := range r.Unmatched {
			t.Logf("%d %s", u.Count, u.Key)
		}
		t.Fatalf("%d unmatched groups, want 3", len(r.Unmatched))
	}
	for _, id := range []string{"WIN32-CALL-FAILED", "KUBEPROXY-LB-PORT-EXISTS", "KUBEPROXY-ENDPOINT-INFO-MISSING", "HNS-803B001E-INVALID-IP",
		"KUBELET-CNI-NOT-INITIALIZED", "KUBELET-RUN-AS-UID-WINDOWS", "KUBELET-IMAGE-FS-HIGH-THRESHOLD", "CERT-EXPIRED",
		"KUBELET-NODE-NOT-FOUND", "CONTAINERD-CNI-CONFIG-MISSING", "KUBELET-FLEXVOLUME-INIT-OUTPUT"} {
		if _, ok := findingIDs(r)[id]; !ok {
			t.Errorf("%s did not fire on the mix", id)
		}
	}
	if in := r.Inputs[0]; len(in.TruncatedLines) == 0 {
		t.Errorf("the mix's 2 MiB lines were not reported as truncated: %+v", in)
	}
}
