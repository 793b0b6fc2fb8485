package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/gsq-project/gsq/a2s/bohemia"
	"github.com/gsq-project/gsq/result"
)

// renderRules prints the rules table. A DayZ mod list carried in binary
// rules is printed decoded, after the text rules, instead of those rules;
// modsErr is why it did not decode.
func renderRules(tw *tabwriter.Writer, a *result.A2S, modsErr *result.Error) {
	rules := a.Rules
	fmt.Fprintf(tw, "\nrules (%d)\n", len(rules.List))
	text := rules.List
	if a.Mods != nil {
		_, text, _ = bohemia.Message(rules.List)
	}
	for _, rule := range text {
		fmt.Fprintf(tw, "  %s\t%s\n", printable(rule.Name.UTF8()), printable(rule.Value.UTF8()))
	}
	switch {
	case a.Mods != nil:
		fmt.Fprintf(tw, "  (%s: the mod list below)\n", plural(len(rules.List)-len(text), "binary rule"))
		tw.Flush()
		fmt.Fprintf(tw, "\nmods (%d)\n", len(a.Mods.Mods))
		for _, m := range a.Mods.Mods {
			kind := "workshop"
			if m.DLC {
				kind = "dlc"
			}
			fmt.Fprintf(tw, "  %s\t%s %d\n", printable(m.Name.UTF8()), kind, m.WorkshopID)
		}
	case modsErr != nil:
		fmt.Fprintf(tw, "  (binary mod list: %s)\n", modsErr)
	}
}
