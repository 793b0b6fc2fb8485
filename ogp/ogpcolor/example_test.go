package ogpcolor_test

import (
	"fmt"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogpcolor"
)

// A player name "[A] Zoë" whose clan tag is red and whose name is bold.
var (
	name   = ogp.Text("[A] Zoë")
	colors = ogp.ColorInfo{{Value: 0x04}, {Delta: 3, Value: ogp.ColorResetText}, {Delta: 1, Value: ogp.ColorBold}}
)

func ExampleANSI() {
	fmt.Printf("%q\n", ogpcolor.ANSI(name, colors))
	// Output:
	// "\x1b[38;2;170;0;0m[A]\x1b[39m \x1b[1mZoë\x1b[0m"
}

func ExampleSpans() {
	for _, s := range ogpcolor.Spans(name, colors) {
		color := "default"
		if s.Style.HasColor {
			color = s.Style.Color.String()
		}
		fmt.Printf("%q colour %s bold %v\n", s.Text, color, s.Style.Bold)
	}
	// Output:
	// "[A]" colour #aa0000 bold false
	// " " colour default bold false
	// "Zoë" colour default bold true
}
