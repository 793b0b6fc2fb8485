package protocol_test

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/ogp/ogptest"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// Two UDP protocols asked of one address:port at once, on one Client,
// each get their own reply and never the other's: A2S and OGP of a
// simulated server that speaks both on one port (as gsq query --game
// onset asks them), and Query and Bedrock of PocketMine's one port. Where
// the server speaks one of the two (an OGP-only server, a Bedrock-only
// one), the other ends in a timeout, as it does asked alone: not in
// "not the protocol", which it would read in the other's reply. Each
// pair is asked several times over at once, so that the replies cross.
func TestClientAsksTwoProtocolsOfOneAddressAtOnce(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: 1, Challenge: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	op, err := ogptest.LookupProfile("v0.91")
	if err != nil {
		t.Fatal(err)
	}
	ogpOnly := ogptest.NewServer(op)
	t.Cleanup(ogpOnly.Close)
	pocketMine, bedrockOnly := mctest.Start(t, "pocketmine"), mctest.Start(t, "bedrock")
	a2sQ, ogpQ := protocol.A2S.MustPrepare(protocol.Settings{}), protocol.OGP.MustPrepare(protocol.Settings{})
	mcqueryQ, bedrockQ := protocol.MCQuery.MustPrepare(protocol.Settings{}), protocol.Bedrock.MustPrepare(protocol.Settings{})
	const silent = "silent"
	for _, c := range []struct {
		name  string
		addr  netip.AddrPort
		qs    []protocol.Query
		names []string // the Summary's name each query gets, or silent
	}{
		{"a2s and ogp", fleet.Addr(0), []protocol.Query{a2sQ, ogpQ}, []string{"gsq fleet server #0", "gsq fleet server #0"}},
		{"a2s silent, ogp", ogpOnly.Addr(), []protocol.Query{a2sQ, ogpQ}, []string{silent, "gsq ogptest server"}},
		{"mcquery and bedrock", pocketMine.BedrockAddr(), []protocol.Query{mcqueryQ, bedrockQ}, []string{"A gsq Minecraft server", "PocketMine-MP Server"}},
		{"mcquery silent, bedrock", bedrockOnly.BedrockAddr(), []protocol.Query{mcqueryQ, bedrockQ}, []string{silent, "gsq Bedrock server"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var client protocol.Client
			defer client.Close()
			var wg sync.WaitGroup
			for range 4 {
				for i, q := range c.qs {
					wg.Go(func() {
						w := protocol.Waits{}
						if c.names[i] == silent {
							w = protocol.Waits{Timeout: 300 * time.Millisecond, Retries: 1}
						}
						r := client.Ask(testutil.Context(t), q, c.addr.String(), c.addr, w, nil)
						name := ""
						if r.Summary.Name != nil {
							name = *r.Summary.Name
						}
						switch {
						case c.names[i] == silent && (r.Err == nil || r.Err.Kind != result.KindTimeout):
							t.Errorf("%s: %v, want a timeout", q.Protocol().Name, r.Err)
						case c.names[i] != silent && (r.Err != nil || len(r.Errors) != 0 || r.Protocol != q.Protocol().Name || name != c.names[i]):
							t.Errorf("%s: %v, %v, name %q, want %q", q.Protocol().Name, r.Err, r.Errors, name, c.names[i])
						}
					})
				}
			}
			wg.Wait()
		})
	}
}
