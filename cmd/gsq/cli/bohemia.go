package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
)

// Steam AppIDs of the games whose keywords carry tags gsq decodes.
const (
	appDayZ  = 221100
	appArma3 = 107410
)

// browserJSON is the "mods" object of a reply whose rules carry a DayZ
// Server Browser Protocol message: the mods and signatures, or an error
// when the message is there but does not decode. ok is false when the
// rules carry no such message.
func browserJSON(rules *a2s.Rules) (o object, ok bool) {
	msg, _, err := bohemia.Message(rules.List)
	if errors.Is(err, bohemia.ErrNoMessage) {
		return nil, false
	}
	if err == nil {
		var br *bohemia.Browser
		if br, err = bohemia.Decode(msg); err == nil {
			mods := make([]object, 0, len(br.Mods))
			for _, m := range br.Mods {
				var mo object
				mo.text("name", m.Name)
				mo.set("workshop_id", m.WorkshopID)
				mo.set("dlc", m.DLC)
				mo.set("hash", m.Hash)
				mods = append(mods, mo)
			}
			sigs := make([]object, 0, len(br.Signatures))
			for _, s := range br.Signatures {
				var so object
				so.text("name", s)
				sigs = append(sigs, so)
			}
			o.set("version", br.Version)
			o.set("list", mods)
			o.set("signatures", sigs)
			o.set("dlc", br.DLC)
			o.set("overflow", br.Overflow)
			return o, true
		}
	}
	if len(msg) > 0 {
		o.set("version", msg[0])
	}
	o.set("error", err.Error())
	return o, true
}

// renderRules prints the rules table. A DayZ mod list carried in binary
// rules is printed decoded, after the text rules, instead of those rules.
func renderRules(tw *tabwriter.Writer, rules *a2s.Rules) {
	fmt.Fprintf(tw, "\nrules (%d)\n", len(rules.List))
	var br *bohemia.Browser
	msg, text, err := bohemia.Message(rules.List)
	if err == nil {
		br, err = bohemia.Decode(msg)
	}
	if err != nil {
		text = rules.List
	}
	for _, rule := range text {
		fmt.Fprintf(tw, "  %s\t%s\n", printable(rule.Name.UTF8()), printable(rule.Value.UTF8()))
	}
	switch {
	case br != nil:
		fmt.Fprintf(tw, "  (%d binary rules: the mod list below)\n", len(rules.List)-len(text))
		tw.Flush()
		fmt.Fprintf(tw, "\nmods (%d)\n", len(br.Mods))
		for _, m := range br.Mods {
			kind := "workshop"
			if m.DLC {
				kind = "dlc"
			}
			fmt.Fprintf(tw, "  %s\t%s %d\n", printable(m.Name.UTF8()), kind, m.WorkshopID)
		}
	case !errors.Is(err, bohemia.ErrNoMessage):
		fmt.Fprintf(tw, "  (binary mod list: %s)\n", err)
	}
}

// tagsJSON decodes the keywords of DayZ and Arma 3 servers, found by
// AppID, into the object set as info.dayz or info.arma3.
func tagsJSON(in *a2s.Info) (key string, o object) {
	if in.EDF&a2s.EDFKeywords == 0 {
		return "", nil
	}
	switch in.AppID() {
	case appDayZ:
		t := bohemia.ParseDayZTags(in.Keywords.UTF8())
		o.set("official", t.Official())
		o.set("battleye", t.BattlEye)
		o.set("first_person", t.FirstPerson)
		o.set("external", t.External)
		o.set("private_hive", t.PrivateHive)
		o.set("mods", t.Mods)
		o.set("dlc", t.DLC)
		o.set("shard", t.Shard)
		if t.Queue >= 0 {
			o.set("queue", t.Queue)
		}
		o.set("day_acceleration", t.DayAcceleration)
		o.set("night_acceleration", t.NightAcceleration)
		o.set("time", t.Time)
		return "dayz", o
	case appArma3:
		t := bohemia.ParseArma3Tags(in.Keywords.UTF8())
		o.set("battleye", t.BattlEye)
		o.set("required_version", t.RequiredVersion)
		o.set("required_build", t.RequiredBuild)
		state := fmt.Sprint(t.State)
		if t.State >= 0 && t.State < len(bohemia.Arma3State) {
			state = bohemia.Arma3State[t.State]
		}
		o.set("state", state)
		o.set("difficulty", t.Difficulty)
		o.set("equal_mod_required", t.EqualModRequired)
		o.set("locked", t.Locked)
		o.set("verify_signatures", t.VerifySignatures)
		o.set("dedicated", t.Dedicated)
		o.set("game_type", t.GameType)
		o.set("language", t.Language)
		o.set("platform", t.Platform)
		o.set("time_left_minutes", t.TimeLeft)
		o.set("file_patching", t.FilePatching)
		if t.Island != "" {
			o.set("island", t.Island)
		}
		return "arma3", o
	}
	return "", nil
}
