package api

import (
	"encoding/json"
	"strings"
	"testing"
)

const sum = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func validRevision() *Revision {
	return &Revision{
		Name: "1.37.2-kb5040000", Kubelet: "v1.37.2", KubeProxy: "v1.37.2", Containerd: "2.1.4", CNIPlugins: "v1.7.1",
		Binaries:  &BinarySource{Source: "https://mirror.example/kubewin/1.37.2", Checksums: map[string]string{"kubelet.exe": sum, "kube-proxy.exe": sum}},
		OSUpdates: []OSUpdate{{KB: "KB5040000", URL: "https://mirror.example/kb5040000.msu", SHA256: sum}},
	}
}

func TestRevisionRoundTrip(t *testing.T) {
	r := validRevision()
	s, err := EncodeRevision(r)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeRevision(r)
	if err != nil || again != s {
		t.Fatalf("same revision, different bytes:\n%s\n%s", s, again)
	}
	// Map keys come out sorted: the bytes do not depend on map order.
	if i, j := strings.Index(s, `"kube-proxy.exe"`), strings.Index(s, `"kubelet.exe"`); i < 0 || j < 0 || i > j {
		t.Errorf("checksums not in key order: %s", s)
	}
	got, err := DecodeRevision(s)
	if err != nil {
		t.Fatal(err)
	}
	back, _ := EncodeRevision(got)
	if back != s {
		t.Errorf("round trip changed the revision:\n%s\n%s", s, back)
	}
}

func TestRevisionValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Revision)
		want   string // substring of the error; "" = valid
	}{
		{"valid", func(*Revision) {}, ""},
		{"os only", func(r *Revision) {
			r.Kubelet, r.KubeProxy, r.Containerd, r.CNIPlugins, r.Binaries = "", "", "", "", nil
		}, ""},
		{"bad name", func(r *Revision) { r.Name = "Bad_Name" }, "revision name"},
		{"bad version", func(r *Revision) { r.Kubelet = "1.x" }, "kubelet version"},
		{"versions without binaries", func(r *Revision) { r.Binaries = nil }, "binaries is not"},
		{"http source", func(r *Revision) { r.Binaries.Source = "http://mirror/x" }, "plain http"},
		{"no checksums", func(r *Revision) { r.Binaries.Checksums = nil }, "checksums is empty"},
		{"upper-case checksum", func(r *Revision) { r.Binaries.Checksums["kubelet.exe"] = strings.ToUpper(sum) }, `checksums["kubelet.exe"]`},
		{"bad kb", func(r *Revision) { r.OSUpdates[0].KB = "5040000" }, "osUpdates[0].kb"},
		{"http update", func(r *Revision) { r.OSUpdates[0].URL = "http://x/kb.msu" }, "osUpdates[0].url"},
		{"bad update sum", func(r *Revision) { r.OSUpdates[0].SHA256 = "abc" }, "osUpdates[0].sha256"},
		{"nothing", func(r *Revision) {
			r.Kubelet, r.KubeProxy, r.Containerd, r.CNIPlugins, r.Binaries, r.OSUpdates = "", "", "", "", nil, nil
		}, "changes nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRevision()
			tc.change(r)
			err := r.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid revision refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestDecodeRevisionStrict(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", `{"name":"a","kubeletFlags":"x","osUpdates":[{"kb":"KB5040000","url":"C:/kb.msu","sha256":"` + sum + `"}]}`, "unknown field"},
		{"trailing data", `{"name":"a","osUpdates":[{"kb":"KB5040000","url":"C:/kb.msu","sha256":"` + sum + `"}]} {}`, "data after"},
		{"not json", `name: a`, "decode revision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRevision(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNodeStateAndReport(t *testing.T) {
	patch, err := NodeReport("req-2", NodeApplied, "", "b", "a")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &body); err != nil {
		t.Fatal(err)
	}
	for k := range body.Metadata.Annotations {
		switch k {
		case AnnotationObserved, AnnotationNodePhase, AnnotationNodeReason, AnnotationCurrent, AnnotationPrevious:
		default:
			t.Errorf("the node's report writes %s, an orchestrator-owned key", k)
		}
	}
	a := body.Metadata.Annotations
	a[AnnotationRequest] = "req-2"
	st := ReadNodeState(a)
	if !st.Answered() || st.NodePhase != NodeApplied || st.Current != "b" || st.Previous != "a" {
		t.Errorf("state %+v", st)
	}
	a[AnnotationRequest] = "req-3"
	if ReadNodeState(a).Answered() {
		t.Error("an answer to req-2 taken as the answer to req-3")
	}
}

func FuzzDecodeRevision(f *testing.F) {
	s, _ := EncodeRevision(validRevision())
	for _, seed := range []string{s, `{}`, `{"name":"a"}`, `{"name":"a","osUpdates":[{"kb":"KB1234567","url":"x","sha256":"` + sum + `"}]}`, `[`, `null`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := DecodeRevision(in)
		if err != nil {
			return
		}
		// Whatever decodes is valid and encodes back to something that decodes the same.
		out, err := EncodeRevision(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := DecodeRevision(out)
		if err != nil {
			t.Fatalf("re-decode %s: %v", out, err)
		}
		out2, _ := EncodeRevision(r2)
		if out2 != out {
			t.Fatalf("not stable: %s vs %s", out, out2)
		}
	})
}

func TestFlowCheckReport(t *testing.T) {
	patch, err := FlowCheckReport(FlowCheck{Request: "r1", Failed: "pod→service x: timeout"})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &body); err != nil {
		t.Fatal(err)
	}
	fc, err := DecodeFlowCheck(ReadNodeState(body.Metadata.Annotations).FlowCheck)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Request != "r1" || fc.Passed || fc.Failed != "pod→service x: timeout" {
		t.Errorf("flow check %+v", fc)
	}
	if _, err := DecodeFlowCheck(`{"request":"r1","passed":true,"extra":1}`); err == nil {
		t.Error("unknown field accepted")
	}
}
