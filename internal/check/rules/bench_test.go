package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen"
)

// writeManifests generates n workload documents (Windows and Linux Deployments, DaemonSets,
// Jobs and Services, some with problems the rules report) in files of 100 documents each.
func writeManifests(tb testing.TB, dir string, n int) {
	tb.Helper()
	var b strings.Builder
	file := 0
	flush := func() {
		if b.Len() == 0 {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%04d.yaml", file)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		file++
		b.Reset()
	}
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: win-%d, namespace: ns%d, labels: {app: win-%d}}
spec:
  replicas: 2
  selector: {matchLabels: {app: win-%d}}
  template:
    metadata: {labels: {app: win-%d}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: "10.0.17763"}
      tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]
      containers:
      - name: web
        image: mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019
        ports: [{containerPort: 80}]
        resources: {limits: {cpu: "1", memory: 800Mi}, requests: {cpu: 100m, memory: 300Mi}}
`, i, i%50, i, i, i)
		case 1:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: linux-%d, namespace: ns%d}
spec:
  selector: {matchLabels: {app: linux-%d}}
  template:
    metadata: {labels: {app: linux-%d}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        securityContext: {runAsUser: 1000, readOnlyRootFilesystem: true}
`, i, i%50, i, i)
		case 2:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent-%d}
spec:
  selector: {matchLabels: {app: agent-%d}}
  template:
    metadata: {labels: {app: agent-%d}, annotations: {experimental.windows.kubernetes.io/isolation-type: hyperv}}
    spec:
      nodeSelector: {kubernetes.io/os: windows}
      containers: [{name: a, image: "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]
`, i, i, i)
		case 3:
			fmt.Fprintf(&b, `apiVersion: batch/v1
kind: Job
metadata: {name: job-%d}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: j, image: "busybox:1.36", command: [sh, -c, "true"]}]
`, i)
		default:
			fmt.Fprintf(&b, `apiVersion: v1
kind: Service
metadata: {name: svc-%d}
spec:
  selector: {app: win-%d}
  ports: [{port: 80, targetPort: 80}]
`, i, i-4)
		}
		b.WriteString("---\n")
		if (i+1)%100 == 0 {
			flush()
		}
	}
	flush()
}

// BenchmarkCheck5000Nodes10000Manifests: check of a 5,000-node plan (4,000 Linux, 1,000
// Windows, 4 gateway groups) plus 10,000 manifests read from 100 files. Planning happens
// outside the timed loop (it is the planner's benchmark); reading, decoding and every rule are
// inside. Target < 2 s per operation.
func BenchmarkCheck5000Nodes10000Manifests(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 4)
	p, err := plan.New(c)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	writeManifests(b, dir, 10000)
	rules := All()
	b.ReportAllocs()
	b.ResetTimer()
	var rep *check.Report
	for i := 0; i < b.N; i++ {
		ctx, bad, err := check.Load(check.Input{Spec: c, Plan: p, Manifests: []string{dir}})
		if err != nil || bad {
			b.Fatalf("Load: %v %v", err, bad)
		}
		rep = check.Run(ctx, rules, check.Options{})
	}
	b.StopTimer()
	if rep.Inputs.Objects != 10000 || rep.Inputs.PlanNodes != 5000 {
		b.Fatalf("checked %d objects and %d nodes", rep.Inputs.Objects, rep.Inputs.PlanNodes)
	}
	b.ReportMetric(float64(len(rep.Findings)), "findings")
}
