package bohemia_test

import (
	"fmt"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
)

func ExampleParseDayZTags() {
	t := bohemia.ParseDayZTags("battleye,no3rd,external,shard123,lqs2,etm4.000000,entm8.000000,mod,14:05")
	fmt.Println(t.BattlEye, t.FirstPerson, t.Official(), t.Shard, t.Queue, t.DayAcceleration, t.Time)
	// Output: true true false 123 2 4 14:05
}

func ExampleParseArma3Tags() {
	t := bohemia.ParseArma3Tags("bt,r210,n150,s7,i2,mf,lf,vt,dt,tcoop,g65545,f0,pw,e0,")
	fmt.Println(t.RequiredVersion, bohemia.Arma3State[t.State], t.GameType, t.Dedicated, t.Platform)
	// Output: 210 playing coop true w
}

// A DayZ server's rules carry its mod list: Message collects the chunks
// from the rules and Decode reads them; the other rules come back apart.
func ExampleMessage() {
	// What a server would send: the mod list as rules, then its cvars.
	advertised := &bohemia.Browser{
		Mods:       []bohemia.Mod{{Hash: 0x5EED, WorkshopID: 1559212036, Name: a2s.Text("CF")}},
		Signatures: []a2s.Text{a2s.Text("dayz")},
	}
	msg, _ := advertised.Append(nil)
	rules, _ := bohemia.Chunks(msg)
	rules = append(rules, a2s.Rule{Name: a2s.Text("island"), Value: a2s.Text("chernarusplus")})

	// What a client does with the rules it received.
	raw, rest, err := bohemia.Message(rules)
	if err != nil {
		fmt.Println(err)
		return
	}
	br, err := bohemia.Decode(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range br.Mods {
		fmt.Printf("mod %s (workshop %d)\n", m.Name, m.WorkshopID)
	}
	fmt.Printf("signatures %s; other rules: %s=%s\n", br.Signatures[0], rest[0].Name, rest[0].Value)
	// Output:
	// mod CF (workshop 1559212036)
	// signatures dayz; other rules: island=chernarusplus
}
