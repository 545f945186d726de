package errchain

import (
	"regexp"
	"strings"
)

// objectPatterns find what a message names, most specific first. Each pattern's first group is
// the value.
var objectPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	// kubeadm preflight: "[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: …" (kubeadm
	// cmd/kubeadm/app/preflight/checks.go: PreflightError lists "[ERROR %s]: %v" per check name).
	{"check", regexp.MustCompile(`\[(?:ERROR|WARNING) ([A-Za-z0-9][A-Za-z0-9_.:/-]*)\]`)},
	// Config fields: encoding/json's "unknown field \"x\"", sigs.k8s.io/json's strict errors,
	// "Go struct field KubeletConfiguration.x of type", apimachinery validation paths "spec.x: Invalid value".
	{"field", regexp.MustCompile(`unknown field "([^"]+)"`)},
	{"field", regexp.MustCompile(`Go struct field ([A-Za-z0-9_.\[\]]+) of type`)},
	{"field", regexp.MustCompile(`(?:^|[ "'])((?:[a-zA-Z][a-zA-Z0-9]*\.)+[a-zA-Z][a-zA-Z0-9]*(?:\[[0-9]+\])?): (?:Invalid value|Required value|Unsupported value|Forbidden)`)},
	// Positions in a config file: yaml.v2/v3 "line 12:", keepalived's "line 12" in its parser.
	{"line", regexp.MustCompile(`\b[Ll]ine ([0-9]+)\b`)},
	// HNS networks: winkernel "unable to find HNS Network specified by cbr0", hcn "Network name
	// \"x\" not found", win-bridge "Network l2bridge not found".
	{"network", regexp.MustCompile(`(?i)HNS Network specified by ([A-Za-z0-9_.-]+)`)},
	{"network", regexp.MustCompile(`(?i)\bnetwork (?:name )?"?([A-Za-z0-9_.-]+)"? (?:was )?not found`)},
	{"network", regexp.MustCompile(`(?i)\bnetwork "([^"]+)"`)},
	{"image", regexp.MustCompile(`(?i)image "([^"]+)"`)},
	{"service", regexp.MustCompile(`(?i)\bservice '([^']+)'`)},
	{"service", regexp.MustCompile(`(?i)\bservice "([^"]+)"`)},
	{"url", regexp.MustCompile(`\b((?:https?|unix|npipe|tcp)://[^\s"',)]+)`)},
	{"endpoint", regexp.MustCompile(`\b(?:dial|connect|listen) (?:tcp|udp|unix)[46]? ([^\s,:]+:[0-9]+|\[[0-9a-fA-F:]+\]:[0-9]+|/[^\s,:]+)`)},
	// Windows paths, named pipes, then POSIX absolute paths with at least two components.
	{"file", regexp.MustCompile(`(?:^|[\s"'=(\[])((?:\\\\\.\\pipe\\|[A-Za-z]:\\)[^\s"',;]*[^\s"',;.:])`)},
	{"file", regexp.MustCompile(`(?:^|[\s"'=(\[])(/(?:[A-Za-z0-9._@+-]+/)+[A-Za-z0-9._@+-]*[A-Za-z0-9_@+-])`)},
}

const maxObjects = 8

// objects returns what msg names, in the order of objectPatterns, deduplicated.
func objects(msg string) []Object {
	var out []Object
	seen := map[Object]bool{}
	for _, p := range objectPatterns {
		for _, m := range p.re.FindAllStringSubmatch(msg, 4) {
			o := Object{Kind: p.kind, Value: strings.TrimRight(m[1], ".")}
			if o.Value == "" || seen[o] || (p.kind == "file" && coveredByURL(msg, o.Value)) {
				continue
			}
			seen[o] = true
			out = append(out, o)
			if len(out) == maxObjects {
				return out
			}
		}
	}
	return out
}

// coveredByURL reports whether a path is the path part of a URL ("unix:///run/x.sock") that is
// already listed as a url.
func coveredByURL(msg, path string) bool {
	i := strings.Index(msg, path)
	return i >= 2 && msg[i-2:i] == ":/" || i >= 3 && strings.HasSuffix(msg[:i], "//")
}
