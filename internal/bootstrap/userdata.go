package bootstrap

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/binaries"
)

// EC2UserDataLimit is the size limit of EC2 user-data in bytes (raw, before base64): the
// smallest of the common clouds' limits, so user-data under it works on all of them.
const EC2UserDataLimit = 16384

// Where user-data expects (or puts) the kubewin binary.
const (
	linuxKubewinPath   = "/usr/local/bin/kubewin"
	windowsKubewinDir  = `C:\kubewin`
	windowsKubewinPath = windowsKubewinDir + `\kubewin.exe`
)

// UserDataOptions are what cloud user-data needs besides the token: where a fresh machine gets
// kubewin and where kubewin join gets the node binaries. Every field is optional; without a URL
// the user-data expects kubewin on the image.
type UserDataOptions struct {
	// KubewinURL is an http(s) URL of the Linux kubewin binary; KubewinSHA256 its SHA-256 (hex),
	// required with it: the node runs only what it verified.
	KubewinURL    string
	KubewinSHA256 string
	// KubewinURLWindows and KubewinSHA256Windows are the same for kubewin.exe.
	KubewinURLWindows    string
	KubewinSHA256Windows string
	// Binaries is passed to kubewin join --binaries: a local directory or an http(s) base URL.
	Binaries string
}

// forOS returns the URL and SHA-256 for os, with the flag names that set them.
func (o UserDataOptions) forOS(os string) (u, sum, urlFlag, sumFlag string) {
	if os == "windows" {
		return o.KubewinURLWindows, o.KubewinSHA256Windows, "--kubewin-url-windows", "--kubewin-sha256-windows"
	}
	return o.KubewinURL, o.KubewinSHA256, "--kubewin-url", "--kubewin-sha256"
}

// Validate checks the options for os ("linux" or "windows"). Errors name the flag.
func (o UserDataOptions) Validate(os string) error {
	if os != "linux" && os != "windows" {
		return fmt.Errorf("user-data for %q: expected linux or windows", os)
	}
	u, sum, urlFlag, sumFlag := o.forOS(os)
	if u == "" && sum != "" {
		return fmt.Errorf("%s without %s: the checksum is of the binary the node downloads", sumFlag, urlFlag)
	}
	if u != "" {
		if err := checkValue(os, urlFlag, u); err != nil {
			return err
		}
		if err := checkHTTPURL(urlFlag, u); err != nil {
			return err
		}
		if sum == "" {
			return fmt.Errorf("%s %q needs %s: the node runs the download only after checking its SHA-256", urlFlag, u, sumFlag)
		}
		if len(sum) != 64 {
			return fmt.Errorf("%s %q: expected 64 hexadecimal digits (sha256sum of the binary), got %d characters", sumFlag, sum, len(sum))
		}
		if _, err := hex.DecodeString(sum); err != nil {
			return fmt.Errorf("%s %q: expected 64 hexadecimal digits (sha256sum of the binary): %w", sumFlag, sum, err)
		}
	}
	if b := o.Binaries; b != "" {
		if err := checkValue(os, "--binaries", b); err != nil {
			return err
		}
		switch {
		case binaries.IsOfficial(b):
			// The projects' release layouts, read by kubewin join on the node.
			if _, err := binaries.ParseOfficial(b); err != nil {
				return err
			}
		case strings.HasPrefix(b, "http://"):
			return fmt.Errorf("--binaries %q: plain http is not accepted by kubewin join (the binaries and their SHA256SUMS would be unauthenticated); use https", b)
		case strings.Contains(b, "://"):
			if err := checkHTTPURL("--binaries", b); err != nil {
				return err
			}
		case os == "linux" && !strings.HasPrefix(b, "/"):
			return fmt.Errorf("--binaries %q: expected an http(s) URL or an absolute Linux directory (/...): user-data runs in no particular directory", b)
		case os == "windows" && !isWindowsAbs(b):
			return fmt.Errorf(`--binaries %q: expected an http(s) URL or an absolute Windows directory (C:\... or \\server\share): user-data runs in no particular directory`, b)
		case os == "windows" && strings.HasSuffix(b, `\`):
			// Windows PowerShell 5.1 quotes an argument with spaces as "...\" for native
			// programs, and the backslash then escapes the closing quote.
			return fmt.Errorf(`--binaries %q: drop the trailing backslash (Windows PowerShell 5.1 passes it to kubewin.exe as an escaped quote)`, b)
		}
	}
	if o.Binaries == "" {
		return fmt.Errorf("--binaries is required: kubewin join installs the node's binaries from it (an https URL with SHA256SUMS, or a directory on the image)")
	}
	return nil
}

func isWindowsAbs(p string) bool {
	if strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z') && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func checkHTTPURL(flag, s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%s %q: expected an http:// or https:// URL, got scheme %q", flag, s, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%s %q: the URL has no host", flag, s)
	}
	return nil
}

// checkValue admits printable ASCII only: no line breaks (they would end a shell command or a
// YAML line), and Windows PowerShell 5.1 reads a script without byte order mark in the ANSI code
// page, where it also takes the typographic quotes U+2018..U+201B as single quotes.
func checkValue(os, what, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%s %q: byte %d is 0x%02x; expected printable ASCII", what, s, i, c)
		}
	}
	// Windows PowerShell 5.1 passes a double quote inside an argument to native programs
	// unescaped, which splits the argument.
	if os == "windows" && strings.Contains(s, `"`) {
		return fmt.Errorf(`%s %q: a double quote cannot be passed to kubewin.exe by Windows PowerShell 5.1 (in a URL, write %%22)`, what, s)
	}
	return nil
}

// UserData returns cloud user-data for os ("linux" or "windows") that takes a fresh machine to a
// node joined with t: it downloads and verifies kubewin when o names a URL (otherwise it expects
// kubewin on the image) and runs kubewin join. Same input, same bytes.
//
// The user-data holds the token. The clouds serve user-data to the machine only (EC2: from the
// instance metadata service), cloud-init keeps its copies root-only, and the scripts below write
// the token to no file, except on a Windows machine that needs a restart first: then to a
// script readable by SYSTEM and Administrators only, deleted after the join (windowsUserData).
func UserData(t *Token, os string, o UserDataOptions) ([]byte, error) {
	if err := o.Validate(os); err != nil {
		return nil, err
	}
	join := []string{"join", "--server", t.Server, "--token", t.Token, "--ca-cert-hash", t.CACertHash}
	if o.Binaries != "" {
		join = append(join, "--binaries", o.Binaries)
	}
	for i := 2; i < len(join); i += 2 {
		if err := checkValue(os, join[i-1], join[i]); err != nil {
			return nil, fmt.Errorf("user-data %s: %w", os, err)
		}
	}
	if err := checkValue(os, "pool", t.Pool); err != nil {
		return nil, fmt.Errorf("user-data %s: %w", os, err)
	}
	u, sum, urlFlag, _ := o.forOS(os)
	sum = strings.ToLower(sum)
	if os == "windows" {
		return windowsUserData(t, join, u, sum, urlFlag), nil
	}
	return linuxUserData(t, join, u, sum, urlFlag), nil
}

// shQuote quotes s for POSIX sh: in single quotes nothing is special but the single quote.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// psQuote quotes s for PowerShell: in a single-quoted string nothing is special but the single
// quote, written twice (values are ASCII, so the typographic quotes cannot occur).
func psQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// quoteAll quotes the values of join ("join", then flag/value pairs): by position, so that a
// value that looks like a flag is quoted too.
func quoteAll(join []string, quote func(string) string) string {
	q := make([]string, len(join))
	for i, a := range join {
		if i == 0 || i%2 == 1 {
			q[i] = a
		} else {
			q[i] = quote(a)
		}
	}
	return strings.Join(q, " ")
}

func header(b *strings.Builder, comment, os string, t *Token) {
	fmt.Fprintf(b, "%s kubewin user-data (%s): takes a fresh machine to a node of pool %q.\n", comment, os, t.Pool)
	fmt.Fprintf(b, "%s Made by kubewin token create. It holds a bootstrap token: whoever reads it can join nodes\n", comment)
	fmt.Fprintf(b, "%s until %s.\n", comment, t.Expires.UTC().Format(time.RFC3339))
}

// linuxUserData is a cloud-config document whose runcmd is one sh script. cloud-init runs it once,
// on the first boot, after the network is up; it writes the script readable by root only
// (/var/lib/cloud/instance/scripts/runcmd, 0700), as it keeps user-data itself (0600). No set -x:
// the output goes to /var/log/cloud-init-output.log.
func linuxUserData(t *Token, join []string, u, sum, urlFlag string) []byte {
	var b strings.Builder
	b.WriteString("#cloud-config\n")
	header(&b, "#", "linux", t)
	if u == "" {
		fmt.Fprintf(&b, "# kubewin is not downloaded (no %s): the image must have %s.\n", urlFlag, linuxKubewinPath)
	}
	b.WriteString("runcmd:\n  - |\n")
	line := func(s string) { b.WriteString("    " + s + "\n") }
	line("set -eu")
	if u != "" {
		line(`tmp=$(mktemp -d)`)
		line(`curl -fsSL --retry 5 --retry-delay 2 --retry-connrefused -o "$tmp/kubewin" ` + shQuote(u))
		line(`printf '%s  %s\n' ` + shQuote(sum) + ` "$tmp/kubewin" | sha256sum -c -`)
		line(`install -m 0755 "$tmp/kubewin" ` + linuxKubewinPath)
		line(`rm -rf "$tmp"`)
	}
	line("exec " + linuxKubewinPath + " " + quoteAll(join, shQuote))
	return []byte(b.String())
}

// Where the Windows user-data puts the join that must wait for a restart (below).
const (
	windowsRejoinTask   = "kubewin-join"
	windowsRejoinScript = windowsKubewinDir + `\join-after-restart.ps1`
	windowsRejoinLog    = windowsKubewinDir + `\join.log`
	// windowsRejoinTries bounds the retries of a join that failed for a reason that may pass
	// (exit 1: a wait ran out, the API server refused); exit 2 is bad input and is not retried.
	windowsRejoinTries = 10
)

// windowsUserData is a PowerShell script in the tags EC2's launch agents (EC2Config, EC2Launch
// v1 and v2) look for, ASCII only.
//
// A machine without the Containers feature (which brings the Host Network Service) cannot join,
// and Install-WindowsFeature Containers takes effect only after a restart (kubernetes v1.37.1
// cluster/gce/windows/k8s-node-setup.psm1 Install-ContainersFeature, configure.ps1;
// https://learn.microsoft.com/virtualization/windowscontainers/quick-start/set-up-environment),
// after which the launch agents do not run the user-data again ("By default, user data scripts
// run one time when you launch the instance",
// https://docs.aws.amazon.com/AWSEC2/latest/WindowsGuide/ec2-windows-user-data.html). So the
// user-data installs the feature, writes the join into a script readable by SYSTEM and
// Administrators only, registers a startup task that runs it as SYSTEM
// (https://learn.microsoft.com/powershell/module/scheduledtasks/register-scheduledtask,
// New-ScheduledTaskTrigger -AtStartup), and restarts the machine; Restart-Computer returns
// before the restart, hence the exit after it (as in GCE's configure.ps1). After a successful
// join the script unregisters the task and deletes itself, and with it the token; until then
// the task runs it again at every boot. With the feature present nothing is written to disk.
func windowsUserData(t *Token, join []string, u, sum, urlFlag string) []byte {
	var b strings.Builder
	b.WriteString("<powershell>\n")
	header(&b, "#", "windows", t)
	b.WriteString("# persist false (last line; the launch agents' default, written out so that nobody sets it to\n")
	b.WriteString("# true): run once, at the first boot. The token expires, and a node that joined must not join\n")
	b.WriteString("# again at every boot.\n")
	if u == "" {
		fmt.Fprintf(&b, "# kubewin.exe is not downloaded (no %s): the image must have %s.\n", urlFlag, windowsKubewinPath)
	}
	b.WriteString("$ErrorActionPreference = 'Stop'\n")
	fmt.Fprintf(&b, "$exe = %s\n", psQuote(windowsKubewinPath))
	if u != "" {
		tmp := windowsKubewinPath + ".download"
		b.WriteString("# Windows PowerShell 5.1 offers no TLS 1.2 unless told, and its progress bar slows downloads.\n")
		b.WriteString("[Net.ServicePointManager]::SecurityProtocol = [Net.ServicePointManager]::SecurityProtocol -bor [Net.SecurityProtocolType]::Tls12\n")
		b.WriteString("$ProgressPreference = 'SilentlyContinue'\n")
		fmt.Fprintf(&b, "New-Item -ItemType Directory -Force -Path %s | Out-Null\n", psQuote(windowsKubewinDir))
		fmt.Fprintf(&b, "$tmp = %s\n", psQuote(tmp))
		b.WriteString("for ($i = 1; ; $i++) {\n")
		fmt.Fprintf(&b, "    try { Invoke-WebRequest -UseBasicParsing -Uri %s -OutFile $tmp; break }\n", psQuote(u))
		b.WriteString("    catch { if ($i -ge 5) { throw }; Start-Sleep -Seconds (2 * $i) }\n")
		b.WriteString("}\n")
		b.WriteString("$hash = (Get-FileHash -Algorithm SHA256 -LiteralPath $tmp).Hash\n")
		fmt.Fprintf(&b, "if ($hash -ne %s) {\n", psQuote(sum))
		b.WriteString("    Remove-Item -Force -LiteralPath $tmp\n")
		fmt.Fprintf(&b, "    throw ('kubewin.exe has SHA-256 {0}, expected {1}' -f $hash, %s)\n", psQuote(sum))
		b.WriteString("}\n")
		b.WriteString("Move-Item -Force -LiteralPath $tmp -Destination $exe\n")
	}
	if u == "" {
		fmt.Fprintf(&b, "if (-not (Test-Path -LiteralPath $exe)) { throw %s }\n", psQuote(windowsKubewinPath+" is missing; put it on the image or pass "+urlFlag))
	}
	joinLine := "& $exe " + quoteAll(join, psQuote)
	b.WriteString("# Without the Containers feature (HNS) the join cannot succeed, and the feature needs a restart,\n")
	b.WriteString("# after which this script does not run again: a startup task runs the join then (see\n")
	b.WriteString("# internal/bootstrap/userdata.go).\n")
	b.WriteString("if (-not (Get-WindowsFeature -Name Containers).Installed) {\n")
	b.WriteString("    Install-WindowsFeature -Name Containers | Out-Null\n")
	fmt.Fprintf(&b, "    $rejoin = %s\n", psQuote(windowsRejoinScript))
	b.WriteString("    New-Item -ItemType File -Force -Path $rejoin | Out-Null\n")
	b.WriteString("    icacls $rejoin /inheritance:r /grant:r 'SYSTEM:F' 'BUILTIN\\Administrators:F' | Out-Null\n")
	b.WriteString("    if ($LASTEXITCODE -ne 0) { throw \"icacls $rejoin failed ($LASTEXITCODE)\" }\n")
	b.WriteString("    Set-Content -LiteralPath $rejoin -Encoding Ascii -Value @'\n")
	b.WriteString(windowsRejoinBody(joinLine))
	b.WriteString("'@\n")
	b.WriteString("    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument \"-NoProfile -ExecutionPolicy Bypass -File `\"$rejoin`\"\"\n")
	b.WriteString("    $settings = New-ScheduledTaskSettingsSet -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -ExecutionTimeLimit ([TimeSpan]::Zero)\n")
	fmt.Fprintf(&b, "    Register-ScheduledTask -Force -TaskName %s -Action $action -Trigger (New-ScheduledTaskTrigger -AtStartup) -Settings $settings -User 'NT AUTHORITY\\SYSTEM' -RunLevel Highest | Out-Null\n", psQuote(windowsRejoinTask))
	b.WriteString("    Restart-Computer -Force\n")
	b.WriteString("    exit 0\n")
	b.WriteString("}\n")
	b.WriteString("# kubewin.exe logs to stderr; where a host redirects it, Windows PowerShell 5.1 makes each line\n")
	b.WriteString("# an error record, which 'Stop' would make fatal. Its exit code decides.\n")
	b.WriteString("$ErrorActionPreference = 'Continue'\n")
	b.WriteString(joinLine + "\n")
	b.WriteString("exit $LASTEXITCODE\n")
	b.WriteString("</powershell>\n")
	b.WriteString("<persist>false</persist>\n")
	return []byte(b.String())
}

// windowsRejoinBody is the script the startup task runs after the restart: the join, retried
// a minute apart while it fails with exit 1, its output appended to a log; once it succeeded,
// the task and the script (which holds the token) are removed. It is embedded in the user-data
// as a single-quoted here-string, which only a line starting with '@ could end: the values in
// joinLine are printable ASCII without line breaks (checkValue). ExecutionTimeLimit 0 (no
// limit, https://learn.microsoft.com/windows/win32/taskschd/tasksettings-executiontimelimit):
// each join is bounded by its own --timeout, and the retries by windowsRejoinTries.
func windowsRejoinBody(joinLine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$exe = %s\n", psQuote(windowsKubewinPath))
	fmt.Fprintf(&b, "for ($i = 1; $i -le %d; $i++) {\n", windowsRejoinTries)
	fmt.Fprintf(&b, "    %s *>> %s\n", joinLine, psQuote(windowsRejoinLog))
	b.WriteString("    if ($LASTEXITCODE -ne 1) { break }\n")
	b.WriteString("    Start-Sleep -Seconds 60\n")
	b.WriteString("}\n")
	b.WriteString("if ($LASTEXITCODE -eq 0) {\n")
	fmt.Fprintf(&b, "    Unregister-ScheduledTask -TaskName %s -Confirm:$false\n", psQuote(windowsRejoinTask))
	b.WriteString("    Remove-Item -Force -LiteralPath $PSCommandPath\n")
	b.WriteString("}\n")
	b.WriteString("exit $LASTEXITCODE\n")
	return b.String()
}
