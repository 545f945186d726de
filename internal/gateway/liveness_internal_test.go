//go:build linux

package gateway

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		in    string
		state byte
		ppid  int
		ok    bool
	}{
		{"1234 (keepalived) S 1200 1200 1 0 -1", 'S', 1200, true},
		{"1234 (keepalived) R 1 1234 1234 0 -1 4194560 167 0 0 0 30 12 0 0", 'R', 1, true},
		{"1234 (keepalived) T 1200 1200", 'T', 1200, true},
		{"1234 (keepalived) Z 77 1200", 'Z', 77, true},
		{"99 (a) b) (c) R 5 5", 'R', 5, true}, // comm with spaces and parentheses
		{"99 keepalived S 5", 0, 0, false},
		{"99 (x) S", 0, 0, false},
		{"99 (x) SS 5", 0, 0, false},
		{"99 (x) S five", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		st, err := parseProcStat(tt.in)
		if strings.HasSuffix(tt.in, "30 12 0 0") && st.CPUTicks != 42 {
			t.Errorf("parseProcStat(%q): CPU ticks %d, want 30+12", tt.in, st.CPUTicks)
		}
		if (err == nil) != tt.ok || st.State != tt.state || st.PPID != tt.ppid {
			t.Errorf("parseProcStat(%q) = %+v, %v; want state %c ppid %d ok %v", tt.in, st, err, tt.state, tt.ppid, tt.ok)
		}
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("1234 (keepalived) S 1200 1200 1 0 -1")
	f.Add("99 (a) b) (c) R 5 5")
	f.Add(")")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseProcStat(s)
		if err != nil && st != (procStat{}) {
			t.Fatalf("%q: error %v with a result %+v", s, err, st)
		}
	})
}

func TestParseVoluntarySwitches(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"Name:\tkeepalived\nvoluntary_ctxt_switches:\t132\nnonvoluntary_ctxt_switches:\t4\n", 132, true},
		{"nonvoluntary_ctxt_switches:\t4\n", 0, false},
		{"voluntary_ctxt_switches:\tmany\n", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := parseVoluntarySwitches([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseVoluntarySwitches(%q) = %d, %v; want %d ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseVoluntarySwitches(f *testing.F) {
	f.Add("voluntary_ctxt_switches:\t132\n")
	f.Add("voluntary_ctxt_switches:")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := parseVoluntarySwitches([]byte(s)); err != nil && n != 0 {
			t.Fatalf("%q: error %v with %d", s, err, n)
		}
	})
}

// TestLivenessJudge walks samples through time: progress keeps keepalived alive, a standstill of
// stallAfter (whatever the state letter says) is a freeze, a zombie child or no parent is gone,
// and a respawned child starts a fresh clock.
func TestLivenessJudge(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	child := func(pid int, state byte, sw uint64) KeepalivedSample {
		return KeepalivedSample{Parent: 10, Children: []KeepalivedChild{{PID: pid, State: state, Switches: sw}}}
	}
	steps := []struct {
		at   int
		s    KeepalivedSample
		want verdict
		who  int
	}{
		{0, child(11, 'S', 100), alive, 0},
		{500, child(11, 'S', 120), alive, 0},
		{1000, child(11, 'S', 120), alive, 0},   // 500 ms without progress: fine
		{1499, child(11, 'D', 120), alive, 0},   // 999 ms
		{1500, child(11, 'D', 120), frozen, 11}, // 1 s: stuck in the kernel
		{2000, child(11, 'T', 120), frozen, 11},
		{2500, child(11, 'Z', 120), gone, 11}, // killed, parent not reaping yet
		{3000, KeepalivedSample{Parent: 10}, alive, 0},
		{3500, child(12, 'S', 5), alive, 0},
		{4400, child(12, 'S', 5), alive, 0}, // new child: its clock started at 3500
		{4500, child(12, 'S', 5), frozen, 12},
		{4600, child(12, 'R', 6), alive, 0},
		// Busy without blocking (a long reload): CPU time moves, so it is running.
		{5600, KeepalivedSample{Parent: 10, Children: []KeepalivedChild{{PID: 12, State: 'R', Switches: 6, CPUTicks: 90}}}, alive, 0},
		{6600, KeepalivedSample{Parent: 10, Children: []KeepalivedChild{{PID: 12, State: 'D', Switches: 6, CPUTicks: 90}}}, frozen, 12},
		{7000, KeepalivedSample{}, gone, 0},
		{7500, child(12, 'S', 6), alive, 0}, // forgotten while gone: a fresh clock
		{8400, child(12, 'S', 6), alive, 0},
	}
	l := &liveness{stallAfter: time.Second}
	for _, st := range steps {
		v, who, why := l.judge(st.s, at(st.at))
		if v != st.want || who != st.who {
			t.Fatalf("at %d ms: verdict %d (child %d, %q), want %d (child %d)", st.at, v, who, why, st.want, st.who)
		}
	}
}

func TestStallAfterFor(t *testing.T) {
	for _, tt := range []struct {
		advert float64
		want   time.Duration
	}{{0.05, time.Second}, {0.25, time.Second}, {1, 4 * time.Second}, {3, 12 * time.Second}} {
		if got := stallAfterFor(tt.advert); got != tt.want {
			t.Errorf("stallAfterFor(%v) = %v, want %v", tt.advert, got, tt.want)
		}
	}
}

// TestSampleFromProcFiles: Sample reads a proc tree; a zombie parent is no keepalived, and the
// children are found from the parent's children file.
func TestSampleFromProcFiles(t *testing.T) {
	proc := t.TempDir()
	write := func(pid int, name, data string) {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		if name == "children" {
			dir = filepath.Join(dir, "task", strconv.Itoa(pid))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pidFile := filepath.Join(t.TempDir(), "keepalived.pid")
	if err := os.WriteFile(pidFile, []byte("10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(10, "comm", "keepalived\n")
	write(10, "stat", "10 (keepalived) S 1 10 10 0")
	write(10, "children", "11 12 ")
	write(11, "comm", "keepalived\n")
	write(11, "stat", "11 (keepalived) T 10 10 10 0")
	write(11, "status", "Name:\tkeepalived\nvoluntary_ctxt_switches:\t42\n")
	write(12, "comm", "sh\n") // a notify script: not keepalived
	write(12, "stat", "12 (sh) S 10 10 10 0")
	r := PIDFileReloader{PIDFile: pidFile, Proc: proc}
	s, err := r.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if s.Parent != 10 || len(s.Children) != 1 || s.Children[0] != (KeepalivedChild{PID: 11, State: 'T', Switches: 42}) {
		t.Fatalf("Sample() = %+v", s)
	}
	write(10, "stat", "10 (keepalived) Z 1 10 10 0")
	if ok, err := r.Running(); ok || err != nil {
		t.Fatalf("zombie parent: Running() = %v, %v", ok, err)
	}
}
