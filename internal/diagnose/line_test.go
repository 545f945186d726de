package diagnose

import "testing"

func TestParseLine(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		format Format
		sev    byte
		time   string
		msg    string
		node   string
		repeat int
		pid    int
		source string
	}{
		{name: "klog", in: "E0425 01:27:31.053862    8064 proxier.go:1231] Policy creation failed", format: FormatKlog, sev: 'E',
			time: "04-25 01:27:31.053862", msg: "Policy creation failed", repeat: 1, pid: 8064, source: "proxier.go:1231"},
		{name: "klog short thread pad", in: "I1114 09:48:35.398102 4496 driver-call.go:267] x", format: FormatKlog, sev: 'I',
			time: "11-14 09:48:35.398102", msg: "x", repeat: 1, pid: 4496, source: "driver-call.go:267"},
		{name: "klog structured", in: `F0101 00:00:00.000001       1 run.go:74] "command failed" err="x"`, format: FormatKlog, sev: 'F',
			time: "01-01 00:00:00.000001", msg: `"command failed" err="x"`, repeat: 1, pid: 1, source: "run.go:74"},
		{name: "not klog: bad month", in: "E1325 01:27:31.053862 1 a.go:1] x", format: FormatPlain, msg: "E1325 01:27:31.053862 1 a.go:1] x", repeat: 1},
		{name: "not klog: no source", in: "E0101 01:27:31.053862 1 nothing here", format: FormatPlain, msg: "E0101 01:27:31.053862 1 nothing here", repeat: 1},
		{name: "logrus", in: `time="2024-09-12T14:00:00.123456789Z" level=error msg="failed to load cni" error="x"`, format: FormatLogrus, sev: 'E',
			time: "2024-09-12T14:00:00.123456789Z", msg: `"failed to load cni" error="x"`, repeat: 1},
		{name: "describe event", in: "  Warning  FailedCreatePodSandBox  10m (x12 over 13m)  kubelet, node009   Failed to create pod sandbox: boom",
			format: FormatEvent, sev: 'W', msg: "Failed to create pod sandbox: boom", node: "node009", repeat: 12},
		{name: "get events", in: "10m         Warning   FailedMount   pod/web-0   MountVolume.SetUp failed", format: FormatEvent, sev: 'W',
			msg: "MountVolume.SetUp failed", repeat: 1},
		{name: "winevent table", in: "5/8/2020 8:36:43 AM   7031 Error   The kubelet service terminated unexpectedly.", format: FormatEventLog, sev: 'E',
			time: "2020-05-08T08:36:43Z", msg: "5/8/2020 8:36:43 AM   7031 Error   The kubelet service terminated unexpectedly.", repeat: 1},
		{name: "csv event", in: `"9/12/2024 2:00:01 PM","7031","Error","The kubelet service terminated unexpectedly.  It has done this 2 time(s)."`,
			format: FormatEventLog, sev: 'E', time: "2024-09-12T14:00:01Z", repeat: 1,
			msg: `"9/12/2024 2:00:01 PM","7031","Error","The kubelet service terminated unexpectedly.  It has done this 2 time(s)."`},
		{name: "plain", in: "Waiting for the Network to be created", format: FormatPlain, msg: "Waiting for the Network to be created", repeat: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := ParseLine([]byte(tt.in))
			if l.Format != tt.format || l.Severity != tt.sev || l.Time.String() != tt.time || string(l.Msg) != tt.msg ||
				l.Node != tt.node || l.Repeat != tt.repeat || l.PID != tt.pid || l.Source != tt.source {
				t.Errorf("ParseLine(%q) = format %s sev %q time %q msg %q node %q repeat %d pid %d source %q",
					tt.in, l.Format, l.Severity, l.Time, l.Msg, l.Node, l.Repeat, l.PID, l.Source)
			}
		})
	}
}

func TestKlogHeaderLen(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"I0912 08:00:00.018081    4120 main.go:386] x", len("I0912 08:00:00.018081    4120 ")},
		{"E1114 09:48:35.398102 4496 driver-call.go:267] x", len("E1114 09:48:35.398102 4496 ")},
		{"Waiting for the Network to be created", 0},
		{"E0101", 0},
	}
	for _, tt := range tests {
		if got := klogHeaderLen([]byte(tt.in)); got != tt.want {
			t.Errorf("klogHeaderLen(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
