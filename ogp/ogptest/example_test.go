package ogptest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func ExampleNewServer() {
	p, err := ogptest.LookupProfile("v0.91")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := ogptest.NewServer(p)
	defer srv.Close()

	c := &ogp.Client{Timeout: time.Second}
	defer c.Close()
	q := ogp.Query{Request: ogp.RequestServerInfo | ogp.RequestRules, Info: ogp.InfoHostName | ogp.InfoMap}
	resp, err := c.Query(context.Background(), srv.Addr(), &q)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := resp.Answer
	fmt.Println(a.Info.HostName, "on", a.Info.Map.Name)
	for _, r := range a.Rules {
		fmt.Printf("%s = %s\n", r.Key.UTF8(), r.Value.UTF8())
	}
	fmt.Println("datagrams received:", srv.Received())
	// Output:
	// gsq ogptest server on Fortress
	// timelimit = 30
	// motd = héllo
	// datagrams received: 2
}

func ExampleLookupProfile() {
	p, err := ogptest.LookupProfile("challenge-churn")
	fmt.Println(p.Name, p.ChurnEvery, err)
	_, err = ogptest.LookupProfile("v2")
	fmt.Println(err)
	// Output:
	// challenge-churn 2 <nil>
	// ogptest: unknown profile "v2" (known: v0.91, v1, split-out-of-order, banned, invalid-value, challenge-churn, challenge-header-only, challenge-copy-only, lossy)
}

// Every built-in profile and the dialect it speaks.
func ExampleProfileNames() {
	for _, name := range ogptest.ProfileNames() {
		p, _ := ogptest.LookupProfile(name)
		fmt.Printf("%s (%v)\n", name, p.Dialect)
	}
	// Output:
	// v0.91 (v0.91)
	// v1 (v1)
	// split-out-of-order (v0.91)
	// banned (v0.91)
	// invalid-value (v0.91)
	// challenge-churn (v0.91)
	// challenge-header-only (v0.91)
	// challenge-copy-only (v0.91)
	// lossy (v0.91)
}
