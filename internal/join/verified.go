package join

import (
	"context"
	"fmt"
	"strings"
)

// InstallVerified is join's verified install (Binaries.install) for a caller that pins one file
// itself — the node side of kubewin rollout (internal/upgrade), whose revision carries each
// file's sha256: name is fetched from Source (a directory or an https base URL), hashed while
// it streams to a temporary file beside dst, and renamed to dst only when it has sum. An
// identical dst is left alone. Plain http is refused for the reason readSums gives.
func (b Binaries) InstallVerified(ctx context.Context, name, sum, dst string) (Change, error) {
	if strings.HasPrefix(b.Source, "http://") {
		return Change{}, fmt.Errorf("%s from %s: plain http is not accepted (the file would be unauthenticated); use https", name, b.Source)
	}
	return b.install(ctx, map[string]string{name: strings.ToLower(sum)}, name, dst)
}
