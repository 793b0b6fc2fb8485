package mctest_test

import (
	"fmt"

	"github.com/gsq-project/gsq/minecraft/mctest"
)

func ExampleLookupProfile() {
	p, err := mctest.LookupProfile("velocity")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.NoPong)
	_, err = mctest.LookupProfile("spigot")
	fmt.Println(err)
	// Output:
	// velocity true
	// mctest: unknown profile "spigot" (known: vanilla, status-off, starting, velocity, legacy-1.6, forge-1.12, forge, neoforge, bcc, byte-writes, huge, geyser, pocketmine, bedrock, bedrock-empty-version)
}
