package render

import (
	"bytes"
	"fmt"

	"github.com/kubewin/kubewin/internal/plan"
)

// PauseDockerfile renders pause/Dockerfile: a never-exiting sandbox image on nanoserver of the
// node's own build, as the field report built it (seed 000 §2.5). Process isolation needs the
// image build to equal the host build. The plan's pause image (a multi-platform image with
// Windows variants) is what containerd uses; this file is for registries that lack it.
func PauseDockerfile(n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render pause Dockerfile for %s: not a Windows node", n.Name)
	}
	if w.NanoserverImage == "" {
		return nil, fmt.Errorf("render pause Dockerfile for %s: no nanoserver image planned", n.Name)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Windows pause image for %s (%s, image tag %s).\n", n.Name, w.BuildLabel, w.ImageTag)
	fmt.Fprintf(&b, "# %s\n#\n", generatedBy)
	fmt.Fprintf(&b, "# containerd uses %s; build this image only when that registry is\n", w.PauseImage)
	b.WriteString("# unreachable, on a Windows host of the same build, then set spec.images.windowsPause:\n")
	fmt.Fprintf(&b, "#   docker build -t <registry>/pause:%s .\n", w.ImageTag)
	fmt.Fprintf(&b, "FROM %s\n", w.NanoserverImage)
	b.WriteString("CMD [\"ping\", \"-t\", \"127.0.0.1\"]\n")
	return b.Bytes(), nil
}
