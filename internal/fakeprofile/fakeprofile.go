// Package fakeprofile holds the profile lookup that the fake servers'
// packages share (the convention of docs/conventions.md: LookupProfile,
// whose error lists the known names, and ProfileNames). It uses the
// standard library only.
package fakeprofile

import (
	"fmt"
	"strings"
)

// Lookup returns the profile of all that nameOf calls name. The error,
// prefixed "pkg: ", lists the known names.
func Lookup[P any](pkg string, all []P, nameOf func(P) string, name string) (P, error) {
	for _, p := range all {
		if nameOf(p) == name {
			return p, nil
		}
	}
	var zero P
	return zero, fmt.Errorf("%s: unknown profile %q (known: %s)", pkg, name, strings.Join(Names(all, nameOf), ", "))
}

// Names returns the names of all, in order.
func Names[P any](all []P, nameOf func(P) string) []string {
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = nameOf(p)
	}
	return names
}
