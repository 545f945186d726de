package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/discover"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// effectiveSpecFile is the bundle file holding the description a --from-cluster plan used.
const effectiveSpecFile = "cluster.yaml"

// discoverClusterSpec reads the live cluster, lets the partial description in file (if any)
// override what was discovered, and validates the result. The merged document never existed as a
// file, so its errors carry field paths but no line numbers; the values discovery could not find
// are listed with them because they are the usual cause.
func discoverClusterSpec(ctx context.Context, s streams, access clusterAccess, file string) (*v1alpha1.Cluster, *v1alpha1.Source, []atomicfs.File, error) {
	var user *v1alpha1.Cluster
	if file != "" {
		name, data, err := readSpecInput(s, file)
		if err != nil {
			return nil, nil, nil, err
		}
		c, src, err := v1alpha1.Decode(name, data)
		if err != nil {
			return nil, nil, nil, specError(src, err)
		}
		user = c
	}
	cfg, opts, err := access.load()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, access.timeout)
	defer cancel()
	res, err := discover.Discover(ctx, cfg, opts)
	if err != nil {
		var ue *discover.UnreachableError
		if errors.As(err, &ue) {
			return nil, nil, nil, cliutil.BadInputf("%v (timeout %s)", err, access.timeout)
		}
		return nil, nil, nil, cliutil.BadInput(fmt.Errorf("discover cluster: %w", err))
	}
	merged := discover.Merge(res.Cluster, user)
	v1alpha1.SetDefaults(merged)
	origin := "<discovered cluster>"
	if file != "" {
		origin = "<discovered cluster + " + file + ">"
	}
	if errs := v1alpha1.Validate(merged); len(errs) > 0 {
		for _, e := range errs {
			e.File = origin
		}
		err := specError(nil, errs)
		if hint := missingHint(res); hint != "" {
			err = cliutil.BadInput(fmt.Errorf("%w\n%s", err, hint))
		}
		return nil, nil, nil, err
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(s.err, "kubewin: warning: sources disagree on %s; using %s (see kubewin discover)\n", c.Field, c.Chosen)
	}
	data, err := yaml.Marshal(merged)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encode effective cluster description: %w", err)
	}
	header := "# Effective cluster description of this bundle: discovered from the live cluster"
	if file != "" {
		header += ", overridden by " + file
	}
	data = append([]byte(header+".\n"), data...)
	// Planner errors only carry field paths; an empty Source leaves them without lines, which is
	// right for a document that exists only in memory.
	return merged, nil, []atomicfs.File{{Path: effectiveSpecFile, Data: data}}, nil
}

// readSpecInput returns the display name and bytes of -f (a path, or - for standard input).
func readSpecInput(s streams, file string) (string, []byte, error) {
	if file == "-" {
		data, err := io.ReadAll(s.in)
		if err != nil {
			return "", nil, cliutil.BadInput(fmt.Errorf("read cluster description from standard input: %w", err))
		}
		return "<stdin>", data, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, cliutil.BadInput(fmt.Errorf("read cluster spec: %w", err))
	}
	return file, data, nil
}

// missingHint lists what discovery could not find, as a reminder of what -f must supply.
func missingHint(res *discover.Result) string {
	if len(res.Missing) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("discovery could not find these values; supply them with -f FILE:")
	for _, m := range res.Missing {
		fmt.Fprintf(&b, "\n  %s: %s", m.Field, m.Supply)
		if len(m.Nodes) > 0 {
			fmt.Fprintf(&b, " (nodes: %s)", strings.Join(m.Nodes, ", "))
		}
	}
	return b.String()
}
