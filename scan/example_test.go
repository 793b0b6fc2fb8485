package scan_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
)

// A poller keeps a Session: each Run asks its servers again on the same
// sockets, with the challenges the last run learned.
func Example() {
	srv := a2stest.NewServer(a2stest.Profile{}) // a fake Source server on a loopback port
	defer srv.Close()

	// Patient (no resend on a busy machine), so that the count below holds.
	s := &scan.Scanner{Timeout: 5 * time.Second, MinTimeout: 5 * time.Second}
	session, err := s.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	targets := []scan.Target{{Addr: srv.Addr(), Input: "my-server"}}
	for range 2 {
		sum, err := session.Run(context.Background(), slices.Values(targets), func(r *scan.Outcome) {
			// r.Result is the protocol-neutral result.Result, the one
			// gsq scan prints with r.Result.AppendJSON.
			s, a := r.Result.Summary, r.Result.Detail.(*result.A2S)
			fmt.Printf("%s: %s, %q on %s, %d players, %d rules\n",
				r.Result.Target, r.Status, *s.Name, *s.Map, *s.Players, len(a.Rules.List))
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d datagrams sent\n", sum.Sent)
	}
	// Output:
	// my-server: answered, "gsq test server" on de_dust2, 3 players, 100 rules
	// 4 datagrams sent
	// my-server: answered, "gsq test server" on de_dust2, 3 players, 100 rules
	// 3 datagrams sent
}

// Scan reads a list of servers, one HOST[:PORT] per line, as gsq scan
// does.
func ExampleScanner_Scan() {
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()

	list := "# my servers\n" + srv.Addr().String() + "\nnot a server:x\n"
	s := &scan.Scanner{Query: protocol.A2S.MustPrepare(protocol.Settings{Sections: []result.Section{result.SectionInfo}})}
	sum, err := s.Scan(context.Background(), strings.NewReader(list), func(r *scan.Outcome) {
		switch r.Status {
		case scan.StatusAnswered:
			fmt.Printf("line %d: %s\n", r.Target.Line, r.Result.Detail.(*result.A2S).Info.Name)
		default:
			fmt.Printf("line %d: %s\n", r.Target.Line, r.Status)
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d targets, %d answered, %d failed\n", sum.Targets, sum.Answered, sum.Failed)
	// Unordered output:
	// line 2: gsq test server
	// line 3: failed
	// 2 targets, 1 answered, 1 failed
}
