//go:build windows

package main

import "github.com/kubewin/kubewin/internal/winnode"

// factsHost is this Windows machine (elevated: HNS and the SCM refuse others).
func factsHost() (winnode.Host, error) { return &winnode.WindowsHost{}, nil }
