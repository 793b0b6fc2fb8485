package mctext_test

import (
	"fmt"

	"github.com/gsq-project/gsq/rcon/mctext"
)

func ExampleStrip() {
	fmt.Println(mctext.Strip("§6Gold §lbold§r and §x§F§F§8§0§0§0orange"))
	// Output: Gold bold and orange
}

func ExampleToANSI() {
	fmt.Printf("%q\n", mctext.ToANSI("§aGreen§r plain"))
	// Output: "\x1b[0;92mGreen\x1b[0m plain\x1b[0m"
}
