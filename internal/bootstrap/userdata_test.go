package bootstrap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kubewin/kubewin/internal/testenv/psgrammar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/userdata")

// testCA is a fixed self-signed CA (ECDSA P-256), so the golden files' --ca-cert-hash is fixed.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBizCCATGgAwIBAgIUJ1LZj32tACHFHF68LSGd7BhScDQwCgYIKoZIzj0EAwIw
GjEYMBYGA1UEAwwPa3ViZXdpbi10ZXN0LWNhMCAXDTI2MTEyNzAzMDM0MFoYDzIx
MjYxMTAzMDMwMzQwWjAaMRgwFgYDVQQDDA9rdWJld2luLXRlc3QtY2EwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAASVwoG25KE/wN6pNPgm/4q6gsDbR/I2PGLQLUzk
mG5+FZh56mcDRBY832ZQtivYSFLKeMcqn5BJyWxcE8M6VxdEo1MwUTAdBgNVHQ4E
FgQUW2A8z/xgoNNJw8pxw2nmZdXVi7QwHwYDVR0jBBgwFoAUW2A8z/xgoNNJw8px
w2nmZdXVi7QwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBdiZb+
KFeLV3hAZJGktcm62VVXdUyC3/f+1fWjEhe4kAIhANnmTsWZnIey0OHacrbLtXXd
AkPUnmhCzqkmZMufl9Sj
-----END CERTIFICATE-----
`

const (
	sumA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	sumB = "60303AE22B998861BCE3B28F33EEC1BE758A213C86C93C076DBE9F558C11C752"
)

func fixedToken(t *testing.T) *Token {
	t.Helper()
	tok, err := NewToken("https://api.example:6443", []byte(testCA),
		TokenOptions{Pool: "windows", Token: "abcdef.0123456789abcdef"}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type userDataCase struct {
	name, os string
	o        UserDataOptions
}

// userDataCases are the golden cases: kubewin downloaded, and kubewin on the image.
func userDataCases() []userDataCase {
	download := UserDataOptions{
		KubewinURL:           "https://downloads.example/kubewin/v0.1.0/linux-amd64/kubewin",
		KubewinSHA256:        sumA,
		KubewinURLWindows:    "https://downloads.example/kubewin/v0.1.0/windows-amd64/kubewin.exe",
		KubewinSHA256Windows: sumB,
		Binaries:             "https://downloads.example/kubewin-node/v1.33.1",
	}
	return []userDataCase{
		{"linux-download", "linux", download},
		{"linux-image", "linux", UserDataOptions{Binaries: "/opt/kubewin/binaries"}},
		{"windows-download", "windows", download},
		{"windows-image", "windows", UserDataOptions{Binaries: `C:\kubewin\binaries`}},
	}
}

// TestUserDataGolden: the user-data of a fixed token, byte for byte (-update rewrites), the same
// bytes twice, under EC2's 16 KiB, Windows' ASCII only.
func TestUserDataGolden(t *testing.T) {
	tok := fixedToken(t)
	for _, c := range userDataCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := UserData(tok, c.os, c.o)
			if err != nil {
				t.Fatal(err)
			}
			again, err := UserData(tok, c.os, c.o)
			if err != nil || !bytes.Equal(got, again) {
				t.Errorf("second rendering differs (err %v)", err)
			}
			if len(got) >= EC2UserDataLimit {
				t.Errorf("%d bytes, EC2 takes %d at most", len(got), EC2UserDataLimit)
			}
			t.Logf("%s: %d bytes", c.name, len(got))
			for i, b := range got {
				if b > 0x7e || (b < 0x20 && b != '\n') {
					t.Errorf("byte %d is 0x%02x; user-data is printable ASCII", i, b)
					break
				}
			}
			ext := ".yaml"
			if c.os == "windows" {
				ext = ".txt"
			}
			path := filepath.Join("testdata", "userdata", c.name+ext)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("user-data differs from %s (-update rewrites it):\n%s", path, got)
			}
		})
	}
}

// runcmdScript checks that doc is a #cloud-config document that decodes strictly, and returns its
// runcmd as one sh script (cloud-init writes each item as a line of one script).
func runcmdScript(t *testing.T, doc []byte) string {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte("#cloud-config\n")) {
		t.Fatalf("does not start with #cloud-config:\n%s", doc)
	}
	var cfg struct {
		Runcmd []string `yaml:"runcmd"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("not YAML with only runcmd: %v\n%s", err, doc)
	}
	if len(cfg.Runcmd) == 0 {
		t.Fatalf("no runcmd:\n%s", doc)
	}
	return "#!/bin/sh\n" + strings.Join(cfg.Runcmd, "\n") + "\n"
}

// TestUserDataLinuxIsCloudConfig: the Linux user-data is YAML starting with #cloud-config, its
// runcmd script passes sh -n, and cloud-init's own schema validation accepts it.
func TestUserDataLinuxIsCloudConfig(t *testing.T) {
	tok := fixedToken(t)
	cloudInit, lookErr := exec.LookPath("cloud-init")
	for _, c := range userDataCases() {
		if c.os != "linux" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			doc, err := UserData(tok, c.os, c.o)
			if err != nil {
				t.Fatal(err)
			}
			script := runcmdScript(t, doc)
			if !strings.Contains(script, shQuote(tok.Token)) || !strings.Contains(script, "set -eu\n") {
				t.Errorf("runcmd lacks set -eu or the token:\n%s", script)
			}
			dir := t.TempDir()
			sh := filepath.Join(dir, "runcmd")
			if err := os.WriteFile(sh, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("/bin/sh", "-n", sh).CombinedOutput(); err != nil {
				t.Errorf("sh -n: %v\n%s\n%s", err, out, script)
			}
			if lookErr != nil {
				t.Fatalf("cloud-init is not installed (hack/install-deps.sh installs it): %v", lookErr)
			}
			file := filepath.Join(dir, "user-data")
			if err := os.WriteFile(file, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(cloudInit, "schema", "--config-file", file).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Valid") {
				t.Errorf("cloud-init schema: %v\n%s", err, out)
			}
		})
	}
}

// TestUserDataLinuxRuns runs the runcmd script with sh against a loopback HTTP server serving a
// stand-in kubewin (a shell script that records its arguments), installed into a temporary
// directory instead of /usr/local/bin (the only change made to the script). Values with every
// character sh treats specially arrive unchanged; a download with the wrong checksum is neither
// installed nor run.
func TestUserDataLinuxRuns(t *testing.T) {
	fake := []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$KUBEWIN_ARGS_OUT\"\nexit 7\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(fake) }))
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(fake)

	tok := fixedToken(t)
	tok.Token = `ab'c"d.$(touch pwned)` + "`x`"
	tok.Server = `https://api.example:6443/it's;rm -rf x`
	o := UserDataOptions{KubewinURL: srv.URL + "/kube'win?a=1&b=$HOME", KubewinSHA256: hex.EncodeToString(sum[:]),
		Binaries: `/opt/o'neil dir/\n/$PATH/"q"/*`}

	for _, tc := range []struct {
		name    string
		sha     string
		wantRun bool
	}{
		{"verified", hex.EncodeToString(sum[:]), true},
		{"uppercase checksum", strings.ToUpper(hex.EncodeToString(sum[:])), true},
		{"wrong checksum", sumA, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o.KubewinSHA256 = tc.sha
			doc, err := UserData(tok, "linux", o)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			bin := filepath.Join(dir, "bin", "kubewin")
			if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
				t.Fatal(err)
			}
			script := strings.ReplaceAll(runcmdScript(t, doc), linuxKubewinPath, bin)
			argsOut := filepath.Join(dir, "args")
			cmd := exec.Command("/bin/sh", "-c", script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "KUBEWIN_ARGS_OUT="+argsOut)
			out, err := cmd.CombinedOutput()
			code := cmd.ProcessState.ExitCode()
			if _, statErr := os.Stat(filepath.Join(dir, "pwned")); statErr == nil {
				t.Errorf("a value was executed as a command")
			}
			if !tc.wantRun {
				if err == nil {
					t.Errorf("script succeeded with a wrong checksum:\n%s", out)
				}
				if _, err := os.Stat(bin); err == nil {
					t.Errorf("kubewin installed despite the wrong checksum")
				}
				if _, err := os.Stat(argsOut); err == nil {
					t.Errorf("kubewin ran despite the wrong checksum")
				}
				return
			}
			if code != 7 {
				t.Fatalf("exit %d, want kubewin's 7: %v\n%s", code, err, out)
			}
			fi, err := os.Stat(bin)
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("installed kubewin: %v, mode %v, want 0755", err, fi)
			}
			got, err := os.ReadFile(argsOut)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Join([]string{"join", "--server", tok.Server, "--token", tok.Token,
				"--ca-cert-hash", tok.CACertHash, "--binaries", o.Binaries}, "\n") + "\n"
			if string(got) != want {
				t.Errorf("kubewin got arguments\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// powershellOf returns the script inside EC2's <powershell> tags, which the launch agent runs.
func powershellOf(t *testing.T, doc []byte) string {
	t.Helper()
	s := string(doc)
	if !strings.HasPrefix(s, "<powershell>\n") || !strings.HasSuffix(s, "</powershell>\n<persist>false</persist>\n") {
		t.Fatalf("not wrapped in <powershell> ... </powershell><persist>false</persist>:\n%s", s)
	}
	s = strings.TrimPrefix(s, "<powershell>\n")
	return strings.TrimSuffix(s, "</powershell>\n<persist>false</persist>\n")
}

// TestUserDataWindowsParses: the Windows scripts parse with the real PowerShell grammar with no
// ERROR or MISSING node, and every value of the join command is one single-quoted string token
// that reads back as the value. PowerShell itself cannot run here.
func TestUserDataWindowsParses(t *testing.T) {
	tok := fixedToken(t)
	odd := *tok
	odd.Token = `ab'c.$(x)` + "`d'"
	odd.Server = `https://api.example/it's;$x`
	oddOpts := UserDataOptions{KubewinURLWindows: "https://dl.example/k'w.exe?$a=`1`", KubewinSHA256Windows: sumB,
		Binaries: `C:\o'neil dir\$env:TEMP\x`}
	type variant struct {
		name string
		tok  *Token
		o    UserDataOptions
	}
	var variants []variant
	for _, c := range userDataCases() {
		if c.os == "windows" {
			variants = append(variants, variant{c.name, tok, c.o})
		}
	}
	variants = append(variants, variant{"quotes", &odd, oddOpts})
	// Each variant gives two scripts: the user-data and the join it leaves for after the restart.
	var docs []psgrammar.Document
	for _, v := range variants {
		doc, err := UserData(v.tok, "windows", v.o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), "$ErrorActionPreference = 'Stop'\n") || !strings.Contains(string(doc), "\nexit $LASTEXITCODE\n") {
			t.Errorf("%s: no $ErrorActionPreference = 'Stop' or exit $LASTEXITCODE:\n%s", v.name, doc)
		}
		if v.o.KubewinURLWindows != "" {
			for _, want := range []string{"Invoke-WebRequest -UseBasicParsing", "[Net.SecurityProtocolType]::Tls12", "Get-FileHash -Algorithm SHA256"} {
				if !strings.Contains(string(doc), want) {
					t.Errorf("%s: no %s", v.name, want)
				}
			}
		}
		ps := powershellOf(t, doc)
		docs = append(docs, psgrammar.Document{Name: v.name, Text: ps},
			psgrammar.Document{Name: v.name + " (join after restart)", Text: rejoinScript(t, ps)})
	}
	results, err := psgrammar.Parse(docs, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		v := variants[i/2]
		lines := strings.Split(docs[i].Text, "\n")
		for _, p := range r.Problems {
			t.Errorf("%s: %s\n    %s", r.Name, p, lines[p.Row])
		}
		joinRow := -1
		for row, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "& $exe join ") {
				joinRow = row
			}
		}
		var got []string
		for _, tk := range r.Tokens {
			if tk.Row == joinRow && tk.Type == "verbatim_string_characters" {
				s := strings.TrimSuffix(strings.TrimPrefix(tk.Text, "'"), "'")
				got = append(got, strings.ReplaceAll(s, "''", "'"))
			}
		}
		want := []string{v.tok.Server, v.tok.Token, v.tok.CACertHash, v.o.Binaries}
		if i%2 == 1 {
			want = append(want, windowsRejoinLog)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%s: the grammar reads the join values as %q, want %q", r.Name, got, want)
		}
	}
}

// rejoinScript returns the script the Windows user-data writes for the startup task: the body
// of the here-string it passes to Set-Content.
func rejoinScript(t *testing.T, ps string) string {
	t.Helper()
	const open, end = "Set-Content -LiteralPath $rejoin -Encoding Ascii -Value @'\n", "\n'@\n"
	i := strings.Index(ps, open)
	if i < 0 {
		t.Fatalf("no script for the startup task in\n%s", ps)
	}
	body := ps[i+len(open):]
	j := strings.Index(body, end)
	if j < 0 {
		t.Fatalf("here-string not closed in\n%s", ps)
	}
	return body[:j+1]
}

// issue 22 item 6: without the Containers feature the user-data installs it, leaves the join to
// a startup task that runs as SYSTEM after the restart (the launch agents run user-data once)
// and removes itself and its script after a successful join, and restarts the machine. The
// script holding the token is restricted to SYSTEM and Administrators before the token is
// written; with the feature present, nothing is written.
func TestUserDataWindowsJoinsAfterContainersRestart(t *testing.T) {
	tok := fixedToken(t)
	for _, c := range userDataCases() {
		if c.os != "windows" {
			continue
		}
		doc, err := UserData(tok, c.os, c.o)
		if err != nil {
			t.Fatal(err)
		}
		ps := powershellOf(t, doc)
		joinLine := "& $exe join --server " + psQuote(tok.Server) + " --token " + psQuote(tok.Token) +
			" --ca-cert-hash " + psQuote(tok.CACertHash) + " --binaries " + psQuote(c.o.Binaries)
		inOrder(t, c.name, ps,
			"$exe = 'C:\\kubewin\\kubewin.exe'",
			"if (-not (Get-WindowsFeature -Name Containers).Installed) {",
			"    Install-WindowsFeature -Name Containers | Out-Null",
			"    $rejoin = 'C:\\kubewin\\join-after-restart.ps1'",
			"    New-Item -ItemType File -Force -Path $rejoin | Out-Null",
			"    icacls $rejoin /inheritance:r /grant:r 'SYSTEM:F' 'BUILTIN\\Administrators:F' | Out-Null",
			"    if ($LASTEXITCODE -ne 0) { throw",
			"    Set-Content -LiteralPath $rejoin -Encoding Ascii -Value @'",
			"'@\n",
			"New-ScheduledTaskAction -Execute 'powershell.exe' -Argument \"-NoProfile -ExecutionPolicy Bypass -File `\"$rejoin`\"\"",
			"New-ScheduledTaskSettingsSet -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit ([TimeSpan]::Zero)",
			"Register-ScheduledTask -Force -TaskName 'kubewin-join' -Action $action -Trigger (New-ScheduledTaskTrigger -AtStartup) -Settings $settings -User 'NT AUTHORITY\\SYSTEM' -RunLevel Highest",
			"    Restart-Computer -Force\n    exit 0\n}\n",
			"$ErrorActionPreference = 'Continue'\n"+joinLine+"\nexit $LASTEXITCODE\n")
		if c.o.KubewinURLWindows != "" {
			// kubewin.exe is downloaded and checked before the restart, so the task runs the checked copy.
			inOrder(t, c.name, ps, "Move-Item -Force -LiteralPath $tmp -Destination $exe", "Get-WindowsFeature -Name Containers")
		}
		want := "$exe = 'C:\\kubewin\\kubewin.exe'\n" +
			"for ($i = 1; $i -le 10; $i++) {\n" +
			"    " + joinLine + " *>> 'C:\\kubewin\\join.log'\n" +
			"    if ($LASTEXITCODE -ne 1) { break }\n" +
			"    Start-Sleep -Seconds 60\n" +
			"}\n" +
			"if ($LASTEXITCODE -eq 0) {\n" +
			"    Unregister-ScheduledTask -TaskName 'kubewin-join' -Confirm:$false\n" +
			"    Remove-Item -Force -LiteralPath $PSCommandPath\n" +
			"}\n" +
			"exit $LASTEXITCODE\n"
		if got := rejoinScript(t, ps); got != want {
			t.Errorf("%s: script for the startup task\n%s\nwant\n%s", c.name, got, want)
		}
		if n := strings.Count(ps, "Set-Content"); n != 1 {
			t.Errorf("%s: %d files written, want only the script for the restart", c.name, n)
		}
	}
}

// inOrder asserts that the fragments appear in s in the given order.
func inOrder(t *testing.T, what, s string, fragments ...string) {
	t.Helper()
	at := 0
	for _, f := range fragments {
		i := strings.Index(s[at:], f)
		if i < 0 {
			t.Errorf("%s: %q missing or out of order in\n%s", what, f, s)
			return
		}
		at += i + len(f)
	}
}

func TestUserDataQuoting(t *testing.T) {
	for _, c := range []struct{ in, sh, ps string }{
		{"plain", `'plain'`, `'plain'`},
		{"it's", `'it'\''s'`, `'it''s'`},
		{"''", `''\'''\'''`, `''''''`},
		{`$x "y" ` + "`z`", `'$x "y" ` + "`z`'", `'$x "y" ` + "`z`'"},
		{"", `''`, `''`},
	} {
		if got := shQuote(c.in); got != c.sh {
			t.Errorf("shQuote(%q) = %s, want %s", c.in, got, c.sh)
		}
		if got := psQuote(c.in); got != c.ps {
			t.Errorf("psQuote(%q) = %s, want %s", c.in, got, c.ps)
		}
	}
	tok := fixedToken(t)
	tok.Token = "abc'def.0123"
	o := UserDataOptions{KubewinURL: "https://dl.example/it's", KubewinSHA256: sumA,
		KubewinURLWindows: "https://dl.example/it's.exe", KubewinSHA256Windows: sumA, Binaries: "https://dl.example/node"}
	for _, c := range []struct{ os, token, url string }{
		{"linux", `--token 'abc'\''def.0123'`, `'https://dl.example/it'\''s'`},
		{"windows", `--token 'abc''def.0123'`, `-Uri 'https://dl.example/it''s.exe'`},
	} {
		doc, err := UserData(tok, c.os, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), c.token) || !strings.Contains(string(doc), c.url) {
			t.Errorf("%s: want %s and %s in\n%s", c.os, c.token, c.url, doc)
		}
	}
}

func TestUserDataRejectsBadOptions(t *testing.T) {
	tok := fixedToken(t)
	good := func(u string) UserDataOptions {
		return UserDataOptions{KubewinURL: u, KubewinSHA256: sumA, KubewinURLWindows: u, KubewinSHA256Windows: sumA, Binaries: "https://dl.example/node"}
	}
	withSum := func(o UserDataOptions, sum string) UserDataOptions {
		o.KubewinSHA256, o.KubewinSHA256Windows = sum, sum
		return o
	}
	withBinaries := func(b string) UserDataOptions { return UserDataOptions{Binaries: b} }
	for _, c := range []struct {
		name, os string
		o        UserDataOptions
		tok      func(*Token)
		want     string
	}{
		{"short sha", "linux", withSum(good("https://x/k"), "abc"), nil, `--kubewin-sha256 "abc": expected 64 hexadecimal digits (sha256sum of the binary), got 3 characters`},
		{"non-hex sha", "windows", withSum(good("https://x/k"), strings.Repeat("g", 64)), nil, `--kubewin-sha256-windows "gggg`},
		{"sha with prefix", "linux", withSum(good("https://x/k"), "sha256:"+sumA[:57]), nil, "expected 64 hexadecimal digits"},
		{"url without sha", "linux", withSum(good("https://x/k"), ""), nil, `--kubewin-url "https://x/k" needs --kubewin-sha256`},
		{"sha without url", "windows", UserDataOptions{KubewinSHA256Windows: sumA}, nil, "--kubewin-sha256-windows without --kubewin-url-windows"},
		{"ftp url", "linux", good("ftp://x/k"), nil, `--kubewin-url "ftp://x/k": expected an http:// or https:// URL, got scheme "ftp"`},
		{"file url", "windows", good("file:///C:/k.exe"), nil, `got scheme "file"`},
		{"relative url", "linux", good("downloads/kubewin"), nil, `expected an http:// or https:// URL, got scheme ""`},
		{"no host", "linux", good("https:///kubewin"), nil, "the URL has no host"},
		{"bad url", "linux", good("https://x/%zz"), nil, `--kubewin-url "https://x/%zz": parse`},
		{"newline in url", "linux", good("https://x/k\nrm -rf /"), nil, "byte 11 is 0x0a; expected printable ASCII"},
		{"non-ascii url", "windows", good("https://x/k\u2019s"), nil, "byte 11 is 0xe2; expected printable ASCII"},
		{"double quote on windows", "windows", good(`https://x/"k"`), nil, "a double quote cannot be passed to kubewin.exe"},
		{"binaries ftp", "linux", withBinaries("ftp://x/bin"), nil, `--binaries "ftp://x/bin": expected an http:// or https:// URL`},
		{"binaries plain http", "linux", withBinaries("http://x/bin"), nil, "plain http is not accepted"},
		{"no binaries", "linux", UserDataOptions{}, nil, "--binaries is required"},
		{"binaries official without cni", "windows", withBinaries("official:kubernetes=v1.33.1,containerd=2.1.4"), nil, "cni=VERSION is required"},
		{"binaries relative linux", "linux", withBinaries("bin"), nil, `--binaries "bin": expected an http(s) URL or an absolute Linux directory`},
		{"binaries windows dir on linux", "linux", withBinaries(`C:\bin`), nil, "absolute Linux directory"},
		{"binaries relative windows", "windows", withBinaries(`bin\x`), nil, "absolute Windows directory"},
		{"binaries trailing backslash", "windows", withBinaries(`C:\my bin\`), nil, "drop the trailing backslash"},
		{"token with newline", "linux", withBinaries("/opt/bin"), func(t *Token) { t.Token = "abc\ndef" }, `--token "abc\ndef": byte 3 is 0x0a`},
		{"server with double quote on windows", "windows", withBinaries(`C:\bin`), func(t *Token) { t.Server = `https://x/"` }, `--server "https://x/\"": a double quote`},
		{"unknown os", "darwin", UserDataOptions{}, nil, `user-data for "darwin": expected linux or windows`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := *tok
			if c.tok != nil {
				c.tok(&tk)
			}
			doc, err := UserData(&tk, c.os, c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
			if doc != nil {
				t.Errorf("user-data returned with an error")
			}
		})
	}
	// The same values are fine where they are not a problem.
	for _, c := range []struct {
		os string
		o  UserDataOptions
	}{
		{"linux", good(`https://x/"k"`)},
		{"linux", withBinaries("/opt/bin/")},
		{"windows", withBinaries(`\\server\share\bin`)},
		{"windows", withBinaries("https://x/bin/")},
		{"windows", withBinaries("official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1")},
		{"linux", withBinaries("official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1,cni-release-url=https://m.example/cni")},
		{"linux", good("http://10.0.0.1:8080/k")},
	} {
		if _, err := UserData(tok, c.os, c.o); err != nil {
			t.Errorf("%s %+v: %v", c.os, c.o, err)
		}
	}
}

// FuzzUserData: whatever the values, UserData either rejects them or returns user-data that is
// printable ASCII, a cloud-config whose runcmd holds each value shell-quoted, or a PowerShell
// script holding each value PowerShell-quoted.
func FuzzUserData(f *testing.F) {
	f.Add("abcdef.0123456789abcdef", "https://api.example:6443", "https://dl.example/k", "/opt/bin", "linux")
	f.Add("ab'c.d", "https://x/it's", "http://x/k'", `C:\o'neil`, "windows")
	f.Add("a\nb", "https://x/\u2019", "ftp://x", "rel", "linux")
	f.Add(`a"b`, "https://x/$(y)", "https://x/`k`", `\\srv\share\`, "windows")
	f.Fuzz(func(t *testing.T, token, server, u, binaries, nodeOS string) {
		tok := &Token{Token: token, Server: server, CACertHash: "sha256:" + sumA, Pool: "default"}
		o := UserDataOptions{KubewinURL: u, KubewinSHA256: sumA, KubewinURLWindows: u, KubewinSHA256Windows: sumA, Binaries: binaries}
		doc, err := UserData(tok, nodeOS, o)
		if err != nil {
			return
		}
		for i, b := range doc {
			if b > 0x7e || (b < 0x20 && b != '\n') {
				t.Fatalf("byte %d is 0x%02x", i, b)
			}
		}
		quote, text := psQuote, string(doc)
		if nodeOS == "linux" {
			quote, text = shQuote, runcmdScript(t, doc)
		}
		for _, v := range []string{token, server, u, binaries} {
			if v != "" && !strings.Contains(text, " "+quote(v)+"\n") && !strings.Contains(text, " "+quote(v)+" ") {
				t.Errorf("%q is not in the user-data as %s:\n%s", v, quote(v), text)
			}
		}
	})
}
