//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	logf("argv: %s", strings.Join(args, " "))
	if dir, ok := bundleDir(args); ok {
		if err := rewriteBundle(filepath.Join(dir, "config.json")); err != nil {
			// runc reports errors on stderr (the shim reads runc's log file, too); failing here
			// shows the cause instead of a confusing runc error later.
			fmt.Fprintf(os.Stderr, "runcwrap (kubewin test workaround): %v\n", err)
			logf("error: %v", err)
			os.Exit(1)
		}
	}
	runc := os.Getenv(realRuncEnv)
	if runc == "" {
		runc = defaultRealRunc
	}
	err := syscall.Exec(runc, append([]string{runc}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "runcwrap (kubewin test workaround): exec %s: %v\n", runc, err)
	logf("error: exec %s: %v", runc, err)
	os.Exit(1)
}

// rewriteBundle applies rewriteConfig to the bundle's config.json, replacing the file through a
// rename in the same directory and keeping its permissions.
func rewriteBundle(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, old, changed, err := rewriteConfig(data)
	if err != nil || !changed {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".runcwrap.tmp"
	if err := os.WriteFile(tmp, out, st.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	logf("rewrote %s: process.oomScoreAdj %d -> 0", path, old)
	return nil
}

// logf appends a line to the file named by KUBEWIN_RUNCWRAP_LOG, if set; errors are ignored.
func logf(format string, a ...any) {
	name := os.Getenv(logEnv)
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s pid=%d "+format+"\n", append([]any{time.Now().Format(time.RFC3339Nano), os.Getpid()}, a...)...)
}
