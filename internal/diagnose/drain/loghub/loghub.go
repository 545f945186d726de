// Package loghub measures the Drain miner on LogPAI's loghub ground truth: the labelled 2k
// samples (<dir>/<System>/<System>_2k.log_structured.csv) with logparser's benchmark settings
// and its grouping-accuracy evaluator. The samples are not redistributed here (loghub's LICENSE:
// "freely available for research or academic work"); bench/drain runs it on a checkout.
package loghub

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kubewin/kubewin/internal/diagnose/drain"
)

// Setting is one row of logparser's Drain benchmark (logpai/logparser
// logparser/Drain/benchmark.py, benchmark_settings at db272234a0cb): the dataset's preprocessing
// regexps (each match becomes "<*>"), similarity threshold and depth; published is the
// "Accuracy" (grouping accuracy) logparser reports for Drain with those settings
// (logparser/Drain/README.md, "Benchmark"), and floor what this implementation must reach with
// them. defaultFloor guards kubewin's own configuration (Config{}: built-in masks only, default
// depth and threshold), set 3 points under what it measured when the defaults were chosen; 0 for
// Proxifier, whose events differ in token count ("0 bytes sent" and "403 bytes (0.39 KB) sent"
// are one event), which Drain cannot join without the dataset's regexps.
type Setting struct {
	Name         string
	Regex        []string
	ST           float64
	Depth        int
	Published    float64
	Floor        float64
	DefaultFloor float64
}

// Settings returns logparser's Drain benchmark rows.
func Settings() []Setting {
	return []Setting{
		{"HDFS", []string{`blk_-?\d+`, `(\d+\.){3}\d+(:\d+)?`}, 0.5, 4, 0.9975, 0.97, 0.96},
		{"Hadoop", []string{`(\d+\.){3}\d+`}, 0.5, 4, 0.9475, 0.92, 0.91},
		{"Spark", []string{`(\d+\.){3}\d+`, `\b[KGTM]?B\b`, `([\w-]+\.){2,}[\w-]+`}, 0.5, 4, 0.92, 0.89, 0.88},
		{"Zookeeper", []string{`(/|)(\d+\.){3}\d+(:\d+)?`}, 0.5, 4, 0.9665, 0.94, 0.95},
		{"BGL", []string{`core\.\d+`}, 0.5, 4, 0.9625, 0.93, 0.85},
		{"HPC", []string{`=\d+`}, 0.5, 4, 0.887, 0.86, 0.87},
		{"Thunderbird", []string{`(\d+\.){3}\d+`}, 0.5, 4, 0.955, 0.93, 0.93},
		{"Windows", []string{`0x.*?\s`}, 0.7, 5, 0.997, 0.97, 0.96},
		{"Linux", []string{`(\d+\.){3}\d+`, `\d{2}:\d{2}:\d{2}`}, 0.39, 6, 0.69, 0.66, 0.66},
		{"Android", []string{`(/[\w-]+)+`, `([\w-]+\.){2,}[\w-]+`, `\b(\-?\+?\d+)\b|\b0[Xx][a-fA-F\d]+\b|\b[a-fA-F\d]{4,}\b`}, 0.2, 6, 0.911, 0.88, 0.76},
		{"HealthApp", nil, 0.2, 4, 0.78, 0.75, 0.97},
		{"Apache", []string{`(\d+\.){3}\d+`}, 0.5, 4, 1, 0.97, 0.97},
		{"Proxifier", []string{`<\d+\ssec`, `([\w-]+\.)+[\w-]+(:\d+)?`, `\d{2}:\d{2}(:\d{2})*`, `[KGTM]B`}, 0.6, 3, 0.5265, 0.50, 0},
		{"OpenSSH", []string{`(\d+\.){3}\d+`, `([\w-]+\.){2,}[\w-]+`}, 0.6, 5, 0.7875, 0.76, 0.96},
		{"OpenStack", []string{`((\d+\.){3}\d+,?)+`, `/.+?\s`, `\d+`}, 0.5, 5, 0.7325, 0.70, 0.85},
		{"Mac", []string{`([\w-]+\.){2,}[\w-]+`}, 0.7, 6, 0.7865, 0.76, 0.72},
	}
}

// Labelled is one message of a loghub sample with its ground-truth event id.
type Labelled struct {
	Content, Event string
}

// ReadStructured reads Content and EventId of a loghub *_structured.csv; rows without an
// EventId are dropped, as logparser's evaluator drops them (logparser/utils/evaluator.py).
func ReadStructured(path string) ([]Labelled, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open loghub sample: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read header of %s: %w", path, err)
	}
	ci, ei := -1, -1
	for i, h := range head {
		switch strings.TrimPrefix(h, "\ufeff") {
		case "Content":
			ci = i
		case "EventId":
			ei = i
		}
	}
	if ci < 0 || ei < 0 {
		return nil, fmt.Errorf("%s: no Content or EventId column in %q", path, head)
	}
	var out []Labelled
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if ci >= len(rec) || ei >= len(rec) || rec[ei] == "" {
			continue
		}
		out = append(out, Labelled{rec[ci], rec[ei]})
	}
}

// GroupingAccuracy is GA as logparser's evaluator computes it (logparser/utils/evaluator.py,
// get_accuracy): a message counts as correctly parsed when the set of messages sharing its
// parsed group is exactly the set sharing its ground-truth event.
func GroupingAccuracy(truth, parsed []string) float64 {
	if len(truth) == 0 {
		return 0
	}
	truthSize := map[string]int{}
	for _, t := range truth {
		truthSize[t]++
	}
	type group struct {
		size    int
		events  map[string]bool
		anEvent string
	}
	groups := map[string]*group{}
	for i, p := range parsed {
		g := groups[p]
		if g == nil {
			g = &group{events: map[string]bool{}}
			groups[p] = g
		}
		g.size++
		g.events[truth[i]] = true
		g.anEvent = truth[i]
	}
	correct := 0
	for _, g := range groups {
		if len(g.events) == 1 && truthSize[g.anEvent] == g.size {
			correct += g.size
		}
	}
	return float64(correct) / float64(len(truth))
}

// Mine parses msgs with cfg and returns each message's final template: logparser names a
// parsed group by the md5 of its template string (Drain.py outputResult), so clusters that end
// with the same template count as one group, as they do here.
func Mine(cfg drain.Config, msgs []Labelled) []string {
	cfg.MaxClusters = len(msgs) + 1 // the benchmark has no cap
	m := drain.New(cfg)
	ids := make([]int, len(msgs))
	for i, x := range msgs {
		ids[i], _ = m.Add(x.Content)
	}
	final := map[int]string{}
	for _, c := range m.Clusters() {
		final[c.ID] = c.Template
	}
	out := make([]string, len(msgs))
	for i, id := range ids {
		out[i] = final[id]
	}
	return out
}
