// Command runcwrap is a runc wrapper for kubewin's end-to-end tests. It works around a property
// of the test machine and is never part of what kubewin installs on a user's node.
//
// The test sandbox lacks CAP_SYS_RESOURCE. The CRI gives every pod sandbox (pause) container
// oomScoreAdj -998, and lowering oom_score_adj needs CAP_SYS_RESOURCE, so runc fails each sandbox
// with "failed to update /proc/self/oom_score_adj: Permission denied" (which the kubelet reports as
// "can't get final child's PID from pipe: EOF"). For `runc create` and `runc run` this wrapper
// rewrites a negative process.oomScoreAdj in the bundle's config.json to 0, keeping the rest of
// the document, and then executes the real runc (env KUBEWIN_REAL_RUNC, default /usr/sbin/runc)
// with the same arguments. Every other invocation passes through unchanged.
//
// nodeimage.BuildRuncWrapper builds it as a binary named "runc" in a directory a test puts first
// in containerd's PATH.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Environment variables, matching nodeimage.RealRuncEnv, nodeimage.RuncWrapperLogEnv and
// nodeimage.DefaultRealRunc.
const (
	realRuncEnv     = "KUBEWIN_REAL_RUNC"
	logEnv          = "KUBEWIN_RUNCWRAP_LOG"
	defaultRealRunc = "/usr/sbin/runc"
)

// runc's global options that take a value (runc 1.1 and later); the value may also be attached
// with "=". urfave/cli accepts them with one or two dashes.
var globalValueFlags = map[string]bool{
	"root":       true,
	"log":        true,
	"log-format": true,
	"criu":       true,
	"rootless":   true,
}

// bundleDir returns the bundle directory of a runc command line (args without the program name)
// when the command is create or run: the value of --bundle/-b (also as --bundle=DIR, -b=DIR and
// with a single dash), else "." (runc's default, the working directory). ok is false for every
// other command.
func bundleDir(args []string) (dir string, ok bool) {
	cmd := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				cmd = i + 1
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			cmd = i
			break
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if globalValueFlags[name] {
			i++ // skip the value
		}
	}
	if cmd < 0 || (args[cmd] != "create" && args[cmd] != "run") {
		return "", false
	}
	dir = "."
	for i := cmd + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "bundle" && name != "b" {
			continue
		}
		if hasValue {
			dir = value
		} else if i+1 < len(args) {
			dir = args[i+1]
			i++
		}
	}
	if dir == "" {
		dir = "."
	}
	return dir, true
}

// rewriteConfig returns config (an OCI runtime spec) with a negative process.oomScoreAdj set to 0.
// Only that value changes: the document is decoded into raw JSON values, so every other field
// (including ones this program does not know) is kept. changed is false, and out is config itself,
// when there is nothing to rewrite (no process, no oomScoreAdj, or a value >= 0).
func rewriteConfig(config []byte) (out []byte, old int64, changed bool, err error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(config, &doc); err != nil {
		return nil, 0, false, fmt.Errorf("decode config.json: %w", err)
	}
	rawProcess, ok := doc["process"]
	if !ok || isNull(rawProcess) {
		return config, 0, false, nil
	}
	var process map[string]json.RawMessage
	if err := json.Unmarshal(rawProcess, &process); err != nil {
		return nil, 0, false, fmt.Errorf("decode config.json process: %w", err)
	}
	rawAdj, ok := process["oomScoreAdj"]
	if !ok || isNull(rawAdj) {
		return config, 0, false, nil
	}
	if err := json.Unmarshal(rawAdj, &old); err != nil {
		return nil, 0, false, fmt.Errorf("decode config.json process.oomScoreAdj: %w", err)
	}
	if old >= 0 {
		return config, old, false, nil
	}
	process["oomScoreAdj"] = json.RawMessage("0")
	if doc["process"], err = marshal(process); err != nil {
		return nil, 0, false, err
	}
	if out, err = marshal(doc); err != nil {
		return nil, 0, false, err
	}
	return out, old, true, nil
}

// marshal encodes v without json.Marshal's HTML escaping, so strings keep their bytes.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
