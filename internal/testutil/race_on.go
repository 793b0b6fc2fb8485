//go:build race

package testutil

// Race reports whether the test binary was built with the race detector,
// which slows a test tenfold and allocates: tests scale their loads and
// skip their allocation budgets by it.
const Race = true
