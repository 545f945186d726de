package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/testenv"
)

func TestTokenCommands(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	kc := cp.KubeconfigPath
	secrets := func() int {
		l, err := admin.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}

	code, out, errOut := runCLI(t, "token", "create", "--kubeconfig", kc, "--dry-run")
	if code != cliutil.ExitOK || !strings.Contains(out, "kind: Secret") || !strings.Contains(out, "kind: ClusterRoleBinding") ||
		!strings.Contains(out, "nothing was created") || secrets() != 0 {
		t.Fatalf("dry run: exit %d, %d secrets\n%s%s", code, secrets(), out, errOut)
	}

	code, out, errOut = runCLI(t, "token", "create", "--kubeconfig", kc, "--pool", "windows", "--ttl", "2h", "-o", "json")
	if code != cliutil.ExitOK {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	var created struct {
		ID, Token, CACertHash, JoinCommand string
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(created.JoinCommand, "kubewin join --server "+cp.Host+" --token "+created.Token+" --ca-cert-hash sha256:") || secrets() != 1 {
		t.Errorf("join command %q, %d secrets", created.JoinCommand, secrets())
	}

	code, out, _ = runCLI(t, "token", "list", "--kubeconfig", kc)
	if code != cliutil.ExitOK || !strings.Contains(out, created.ID) || !strings.Contains(out, "windows") || strings.Contains(out, created.Token) {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "token", "delete", "--kubeconfig", kc, created.Token)
	if code != cliutil.ExitOK || !strings.Contains(out, "deleted token "+created.ID) || secrets() != 0 {
		t.Errorf("delete: exit %d, %d secrets\n%s", code, secrets(), out)
	}
	testTokenCreateUserData(t, kc, secrets)
	testTokenReleaseURL(t, kc)
	for _, args := range [][]string{
		{"token", "create", "--kubeconfig", kc, "--pool", "Bad_Pool"},
		{"token", "delete", "--kubeconfig", kc, "nosuch"},
		{"token", "create", "--kubeconfig", kc, "-o", "xml"},
	} {
		if code, _, _ := runCLI(t, args...); code != cliutil.ExitBadInput {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// testTokenCreateUserData: --print-user-data with --dry-run (text and json, nothing created) and
// for real (the user-data alone on stdout, sizes on stderr); bad options exit 2 before anything
// is created.
func testTokenCreateUserData(t *testing.T, kc string, secrets func() int) {
	t.Helper()
	sum := strings.Repeat("ab", 32)
	download := []string{"--kubewin-url", "https://dl.example/kubewin", "--kubewin-sha256", sum,
		"--kubewin-url-windows", "https://dl.example/kubewin.exe", "--kubewin-sha256-windows", sum,
		"--binaries", "https://dl.example/node"}
	before := secrets()
	code, out, errOut := runCLI(t, append([]string{"token", "create", "--kubeconfig", kc, "--dry-run", "--print-user-data", "all"}, download...)...)
	if code != cliutil.ExitOK || !strings.HasPrefix(out, "# user-data linux\n#cloud-config\n") ||
		!strings.Contains(out, "\n# user-data windows\n<powershell>\n") || !strings.Contains(out, "--binaries 'https://dl.example/node'") ||
		strings.Contains(out, "kind: Secret") || secrets() != before {
		t.Fatalf("dry run user-data: exit %d, %d secrets\n%s%s", code, secrets(), out, errOut)
	}
	sizes := regexp.MustCompile(`(?m)^user-data (linux|windows): (\d+) bytes \((\d+\.\d) % of EC2's 16 KiB\)$`).FindAllStringSubmatch(errOut, -1)
	if len(sizes) != 2 || !strings.Contains(errOut, "nothing was created") {
		t.Fatalf("stderr lacks the two sizes or the dry-run note:\n%s", errOut)
	}
	for _, m := range sizes {
		n, _ := strconv.Atoi(m[2])
		if n <= 0 || n >= 16384 {
			t.Errorf("user-data %s: %d bytes", m[1], n)
		}
		t.Logf("user-data %s: %s bytes (%s %%)", m[1], m[2], m[3])
	}

	code, out, errOut = runCLI(t, append([]string{"token", "create", "--kubeconfig", kc, "--dry-run", "-o", "json", "--print-user-data", "linux"}, download...)...)
	var dry struct {
		Objects       []json.RawMessage
		UserData      map[string]string
		UserDataBytes map[string]int
	}
	if code != cliutil.ExitOK || json.Unmarshal([]byte(out), &dry) != nil || len(dry.Objects) == 0 ||
		!strings.HasPrefix(dry.UserData["linux"], "#cloud-config\n") || dry.UserDataBytes["linux"] != len(dry.UserData["linux"]) ||
		len(dry.UserData) != 1 || secrets() != before {
		t.Fatalf("dry run -o json: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, "token", "create", "--kubeconfig", kc, "-o", "json", "--print-user-data", "windows", "--binaries", `C:\node`)
	var created struct {
		Token         string
		UserData      map[string]string
		UserDataBytes map[string]int
	}
	if code != cliutil.ExitOK || json.Unmarshal([]byte(out), &created) != nil || secrets() != before+1 ||
		!strings.Contains(created.UserData["windows"], "--token '"+created.Token+"'") || created.UserDataBytes["windows"] != len(created.UserData["windows"]) {
		t.Fatalf("create -o json: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, "token", "create", "--kubeconfig", kc, "--print-user-data", "linux", "--binaries", "/opt/kubewin/binaries")
	if code != cliutil.ExitOK || !strings.HasPrefix(out, "#cloud-config\n") || !strings.Contains(out, "the image must have /usr/local/bin/kubewin") ||
		!strings.Contains(errOut, "created  Secret kube-system/bootstrap-token-") || !strings.Contains(errOut, "user-data linux: ") || secrets() != before+2 {
		t.Fatalf("create with user-data: exit %d, %d secrets\nstdout:\n%s\nstderr:\n%s", code, secrets(), out, errOut)
	}
	id := regexp.MustCompile(`--token '([a-z0-9]{6})\.`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no token in the user-data:\n%s", out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--print-user-data", "macos"}, `--print-user-data "macos": expected linux, windows or all`},
		{[]string{"--print-user-data", "linux", "--kubewin-url", "ftp://x/k", "--kubewin-sha256", sum}, `--kubewin-url "ftp://x/k": expected an http:// or https:// URL`},
		{[]string{"--print-user-data", "linux", "--kubewin-url", "https://x/k"}, "needs --kubewin-sha256"},
		{[]string{"--print-user-data", "all", "--binaries", "https://x/node", "--kubewin-url-windows", "https://x/k.exe", "--kubewin-sha256-windows", "abc"}, "expected 64 hexadecimal digits"},
		{[]string{"--print-user-data", "linux", "-o", "yaml"}, "-o yaml prints the objects only"},
		{[]string{"--kubewin-url", "https://x/k"}, "--kubewin-url is an option of --print-user-data"},
		{[]string{"--dry-run", "--print-user-data", "windows", "--binaries", "relative"}, "absolute Windows directory"},
	} {
		code, out, errOut := runCLI(t, append([]string{"token", "create", "--kubeconfig", kc}, c.args...)...)
		if code != cliutil.ExitBadInput || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%v: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.want, out, errOut)
		}
	}
	if secrets() != before+2 {
		t.Errorf("bad options created tokens: %d secrets, want %d", secrets(), before+2)
	}
	for _, tok := range []string{created.Token, id[1]} {
		if code, _, errOut := runCLI(t, "token", "delete", "--kubeconfig", kc, tok); code != cliutil.ExitOK {
			t.Errorf("delete %s: exit %d %s", tok, code, errOut)
		}
	}
}

// testTokenReleaseURL: --release-url defaults the kubewin downloads of the user-data to the
// release's linux/amd64 and windows/amd64 binaries (served on loopback), each checked against
// the release's SHA256SUMS; a missing entry, a binary that does not match, or an explicit
// checksum that is not the release's exit 2.
func testTokenReleaseURL(t *testing.T, kc string) {
	t.Helper()
	linux, win := "\x7fELF kubewin", "MZ kubewin.exe"
	sumOf := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	var mu sync.Mutex
	files := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/v0.1.0/")]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	serve := func(f map[string]string) {
		mu.Lock()
		files = f
		mu.Unlock()
	}
	base := srv.URL + "/v0.1.0"
	complete := map[string]string{
		"kubewin-linux-amd64":       linux,
		"kubewin-windows-amd64.exe": win,
		"SHA256SUMS":                sumOf(linux) + "  kubewin-linux-amd64\n" + sumOf(win) + "  kubewin-windows-amd64.exe\n",
	}
	serve(complete)
	args := []string{"token", "create", "--kubeconfig", kc, "--dry-run", "-o", "json", "--binaries", "https://dl.example/node", "--release-url", base}
	code, out, errOut := runCLI(t, append(args, "--print-user-data", "all")...)
	var dry struct{ UserData map[string]string }
	if code != cliutil.ExitOK || json.Unmarshal([]byte(out), &dry) != nil {
		t.Fatalf("--release-url: exit %d\n%s%s", code, out, errOut)
	}
	for nodeOS, want := range map[string][]string{
		"linux":   {base + "/kubewin-linux-amd64", sumOf(linux)},
		"windows": {base + "/kubewin-windows-amd64.exe", sumOf(win)},
	} {
		for _, w := range want {
			if !strings.Contains(dry.UserData[nodeOS], w) {
				t.Errorf("%s user-data lacks %s:\n%s", nodeOS, w, dry.UserData[nodeOS])
			}
		}
	}
	// An explicit URL wins over the release.
	code, out, errOut = runCLI(t, append(args, "--print-user-data", "linux", "--kubewin-url", "https://dl.example/k", "--kubewin-sha256", strings.Repeat("ab", 32))...)
	if code != cliutil.ExitOK || !strings.Contains(out, "https://dl.example/k") || strings.Contains(out, base) {
		t.Errorf("explicit --kubewin-url with --release-url: exit %d\n%s%s", code, out, errOut)
	}

	for _, c := range []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"no windows entry", map[string]string{"kubewin-linux-amd64": linux, "SHA256SUMS": sumOf(linux) + "  kubewin-linux-amd64\n"},
			[]string{"--print-user-data", "windows"},
			"--release-url: " + base + "/SHA256SUMS: kubewin-windows-amd64.exe (the windows/amd64 binary) not listed in SHA256SUMS; it lists kubewin-linux-amd64"},
		{"tampered binary", map[string]string{"kubewin-linux-amd64": linux + "!", "SHA256SUMS": complete["SHA256SUMS"]},
			[]string{"--print-user-data", "linux"},
			base + "/kubewin-linux-amd64 has SHA-256 " + sumOf(linux+"!") + ", but SHA256SUMS lists " + sumOf(linux)},
		{"explicit checksum not the release's", complete,
			[]string{"--print-user-data", "windows", "--kubewin-sha256-windows", strings.Repeat("cd", 32)},
			"--kubewin-sha256-windows " + strings.Repeat("cd", 32) + " is not the SHA-256 of " + base + "/kubewin-windows-amd64.exe"},
		{"no SHA256SUMS", map[string]string{}, []string{"--print-user-data", "linux"}, "SHA256SUMS: 404 Not Found"},
		{"without --print-user-data", complete, nil, "--release-url is an option of --print-user-data"},
	} {
		serve(c.files)
		code, out, errOut := runCLI(t, append(args, c.args...)...)
		if code != cliutil.ExitBadInput || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%s: exit %d, want 2 and %q\nstdout:\n%s\nstderr:\n%s", c.name, code, c.want, out, errOut)
		}
	}
}
