//go:build !linux

package gatewayimage

import "errors"

// lock: the image is assembled with Debian's apt-get and dpkg-deb, on Linux only.
func (a Apt) lock() (func(), error) {
	return nil, errors.New("the gateway image is built on Debian Linux (apt-get, dpkg-deb)")
}
