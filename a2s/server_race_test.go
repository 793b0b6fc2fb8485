//go:build race

package a2s_test

// raceEnabled: the race detector allocates, so allocation budgets are off.
const raceEnabled = true
