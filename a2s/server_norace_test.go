//go:build !race

package a2s_test

const raceEnabled = false
