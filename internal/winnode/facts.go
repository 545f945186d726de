package winnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FactsAPIVersion versions the facts document (kubewin node facts -o json).
const FactsAPIVersion = "kubewin.io/v1alpha1"

// Facts are what the Reconciler's decisions depend on, as a Windows host reports them:
// `kubewin node facts` prints them on a node, and MemHostFromFacts loads them into the model, so
// that a report from a real node becomes a test (testdata/facts). Everything is read through
// the Host, the calls the Reconciler makes.
type Facts struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Source says where the document comes from: "kubewin node facts on <host>", or for a
	// document written by hand, what it was written from.
	Source string `json:"source"`
	// Adapters as Adapters lists them (bound NICs included, forwarding per interface).
	Adapters []Adapter `json:"adapters"`
	// HNS is the Host Network Service's state ("Running", "Stopped", "NotInstalled").
	HNS ServiceState `json:"hns"`
	// Networks and Endpoints as HCN returns them (what HCN echoes back: adapter name, routes).
	Networks  []Network  `json:"networks"`
	Endpoints []Endpoint `json:"endpoints"`
	// Routes are the host's IPv4 routes.
	Routes        []HostRoute `json:"routes"`
	LoadBalancers int         `json:"loadBalancers"`
	// Services are the node services' states.
	Services map[string]ServiceState `json:"services"`
	// Errors are the calls that failed, with their errors (a fact too).
	Errors map[string]string `json:"errors,omitempty"`
}

// GatherFacts reads h's facts. A call that fails is recorded in Errors, not fatal: a host
// whose HNS does not answer is what an operator most needs a report of.
func GatherFacts(ctx context.Context, h Host, services []string) Facts {
	f := Facts{APIVersion: FactsAPIVersion, Kind: "WindowsHostFacts", Services: map[string]ServiceState{}, Errors: map[string]string{}}
	fail := func(what string, err error) { f.Errors[what] = err.Error() }
	var err error
	if f.Adapters, err = h.Adapters(ctx); err != nil {
		fail("adapters", err)
	}
	st, err := h.ServiceStatus(ctx, HNSServiceName)
	f.HNS = st.State
	if err != nil {
		fail("hns", err)
		if !errors.Is(err, ErrServiceNotInstalled) {
			f.HNS = "" // not known: the error says why
		}
	}
	if f.Networks, err = h.ListNetworks(ctx); err != nil {
		fail("networks", err)
	}
	if f.Endpoints, err = h.ListEndpoints(ctx); err != nil {
		fail("endpoints", err)
	}
	if f.Routes, err = h.Routes(ctx); err != nil {
		fail("routes", err)
	}
	if f.LoadBalancers, err = h.LoadBalancerCount(ctx); err != nil {
		fail("loadBalancers", err)
	}
	for _, s := range services {
		st, err := h.ServiceStatus(ctx, s)
		f.Services[s] = st.State
		switch {
		case errors.Is(err, ErrServiceNotInstalled):
			f.Services[s] = ServiceNotFound
		case err != nil:
			f.Services[s] = ""
			fail("service "+s, err)
		}
	}
	if len(f.Errors) == 0 {
		f.Errors = nil
	}
	return f
}

// ParseFacts reads a facts document strictly.
func ParseFacts(data []byte) (Facts, error) {
	var f Facts
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Facts{}, fmt.Errorf("host facts: %w", err)
	}
	if f.APIVersion != FactsAPIVersion || f.Kind != "WindowsHostFacts" {
		return Facts{}, fmt.Errorf("host facts: apiVersion %q kind %q, want %s WindowsHostFacts", f.APIVersion, f.Kind, FactsAPIVersion)
	}
	for _, n := range f.Networks {
		if n.Name == "" || n.ID == "" {
			return Facts{}, fmt.Errorf("host facts: a network without a name or ID")
		}
	}
	for _, e := range f.Endpoints {
		if !slices.ContainsFunc(f.Networks, func(n Network) bool { return n.ID == e.NetworkID }) {
			return Facts{}, fmt.Errorf("host facts: endpoint %s is on network %s, which is not listed", e.Name, e.NetworkID)
		}
	}
	return f, nil
}

// MemHostFromFacts is a model host in the state the facts describe, under model m (the facts
// decide where they can: a bound NIC listed, a stopped hns).
func MemHostFromFacts(f Facts, m Model) *MemHost {
	h := NewMemHostModel(m, f.Adapters...)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range f.Networks {
		n.Routes = slices.Clone(n.Routes)
		h.networks = append(h.networks, n)
		h.seq++
	}
	for _, e := range f.Endpoints {
		e.HostAttached = false // judged by address, as the real host does
		for _, n := range f.Networks {
			if n.ID == e.NetworkID {
				e.Network = n.Name
			}
		}
		h.endpoints = append(h.endpoints, e)
	}
	h.routes = slices.Clone(f.Routes)
	h.lbs = f.LoadBalancers
	switch f.HNS {
	case ServiceStopped:
		h.hnsPID = 0
	case ServiceNotFound:
		h.noContainers = true
	}
	return h
}
