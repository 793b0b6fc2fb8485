// Package textdist measures how far apart two short words are (the
// Levenshtein distance: the fewest insertions, deletions and substitutions
// of a byte that turn one into the other), for the "did you mean" of a
// mistyped name: a config key, a server, a game.
//
// It uses the standard library only.
package textdist

import (
	"slices"
	"strings"
)

// MaxLen is the longest word Distance measures: names are short, and the
// cost grows with the product of the lengths.
const MaxLen = 64

// Distance is the Levenshtein distance of a and b, on bytes; MaxLen when
// either is longer than MaxLen.
func Distance(a, b string) int {
	if len(a) > MaxLen || len(b) > MaxLen {
		return MaxLen
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest returns the words of known within maxDist edits of s (compared
// in lower case), nearest first (ties in the order of known), at most n of
// them.
func Nearest(s string, known []string, maxDist, n int) []string {
	type near struct {
		word string
		d, i int
	}
	s = strings.ToLower(s)
	var found []near
	for i, k := range known {
		if d := Distance(s, strings.ToLower(k)); d <= maxDist {
			found = append(found, near{k, d, i})
		}
	}
	slices.SortFunc(found, func(a, b near) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return a.i - b.i
	})
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.word)
	}
	return out
}
