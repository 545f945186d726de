package main

import (
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/discover"
)

// clusterAccess holds the flags every command that reads a live cluster shares.
type clusterAccess struct {
	kubeconfig, context string
	timeout             time.Duration
}

func (a *clusterAccess) addFlags(f *pflag.FlagSet) {
	f.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVar(&a.context, "context", "", "kubeconfig context (default: the current context)")
	f.DurationVar(&a.timeout, "timeout", 10*time.Second, "give up when the API server has not answered everything within this time")
}

// load resolves the kubeconfig into a client config and the discovery options it implies (the
// kubeconfig's cluster name is a hint for the cluster's name).
func (a *clusterAccess) load() (*rest.Config, discover.Options, error) {
	if a.timeout <= 0 {
		return nil, discover.Options{}, cliutil.BadInputf("--timeout must be positive, got %s", a.timeout)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = a.kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: a.context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, discover.Options{}, cliutil.BadInputf("load kubeconfig: %v", err)
	}
	cfg.Timeout = a.timeout
	opts := discover.Options{}
	if raw, err := loader.RawConfig(); err == nil {
		name := a.context
		if name == "" {
			name = raw.CurrentContext
		}
		if c, ok := raw.Contexts[name]; ok {
			opts.KubeconfigCluster = c.Cluster
		}
	}
	return cfg, opts, nil
}
