package sdtd_test

import (
	"context"
	"testing"

	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
)

// BenchmarkExec is one command over loopback TCP to the fake, with its
// sentinel: two commands on the wire per answer.
func BenchmarkExec(b *testing.B) {
	s := sdtdtest.NewServer("pw", &sdtdtest.SimHandler{})
	defer s.Close()
	c, err := sdtd.Dial(context.Background(), s.Addr().String(), "pw", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Exec(context.Background(), "gettime"); err != nil {
			b.Fatal(err)
		}
	}
}
