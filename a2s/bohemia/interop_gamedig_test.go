//go:build interop

package bohemia_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/a2s/bohemia"
	"github.com/gsq-project/gsq/internal/peertest"
)

// TestInteropGamedigDayZ serves a DayZ-like server whose rules carry a
// message written by Browser.Append and Chunks, and has gamedig 5.3.3's
// own DayZ reader (in .peers/) decode its mod list and keywords.
//
// gamedig reads a mod's Workshop ID as exactly 4 bytes and skips the info
// byte only when it is 4 (its code calls that byte "unknown"), so the mods
// here have 4-byte IDs and no DLC flag; the 5-byte and DLC cases are
// covered by the package's own vector.
func TestInteropGamedigDayZ(t *testing.T) {
	br := &bohemia.Browser{
		Mods: []bohemia.Mod{
			{Hash: 0x01FF0001, WorkshopID: 1559212036, Name: a2s.Text("CF")},
			{Hash: 0xA1B2C3D4, WorkshopID: 1564026768, Name: a2s.Text("Community-Online-Tools")},
			{Hash: 7, WorkshopID: 2116151222, Name: a2s.Text("Dabs Framework")},
		},
		Signatures: []a2s.Text{a2s.Text("dayz")},
	}
	msg, err := br.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := bohemia.Chunks(msg)
	if err != nil {
		t.Fatal(err)
	}
	rules := append(chunks, a2s.Rule{Name: a2s.Text("allowedBuild"), Value: a2s.Text("0")},
		a2s.Rule{Name: a2s.Text("dedicated"), Value: a2s.Text("1")})
	info := a2stest.DefaultInfo()
	info.Keywords = a2s.Text("battleye,no3rd,external,privHive,shard123,lqs5,etm4.000000,entm8.000000,mod,12:34")
	info.EDF |= a2s.EDFKeywords
	srv := a2stest.NewServer(a2stest.Profile{Info: info, Rules: &a2s.Rules{Count: uint16(len(rules)), List: rules}})
	defer srv.Close()

	out := peertest.Gamedig(t, "protocol-dayz", srv.Addr().String())
	var state struct {
		Raw struct {
			DayZMods []struct {
				WorkshopID int64  `json:"workshopId"`
				Title      string `json:"title"`
			} `json:"dayzMods"`
			Queue             int     `json:"queue"`
			FirstPerson       bool    `json:"firstPerson"`
			PrivateHive       bool    `json:"privateHive"`
			External          bool    `json:"external"`
			Time              string  `json:"time"`
			DayAcceleration   float64 `json:"dayAcceleration"`
			NightAcceleration float64 `json:"nightAcceleration"`
		} `json:"raw"`
	}
	if err := json.Unmarshal(out, &state); err != nil {
		t.Fatalf("gamedig output (%v):\n%s", err, out)
	}
	// gamedig lists the mods, then the signatures as mods with a title only.
	mods := state.Raw.DayZMods
	if len(mods) != len(br.Mods)+len(br.Signatures) {
		t.Fatalf("gamedig read %d mods: %+v", len(mods), mods)
	}
	for i, m := range br.Mods {
		if mods[i].Title != string(m.Name) || mods[i].WorkshopID != int64(m.WorkshopID) {
			t.Errorf("mod %d: gamedig %+v, we wrote %+v", i, mods[i], m)
		}
	}
	if mods[len(br.Mods)].Title != "dayz" {
		t.Errorf("signature: gamedig %+v", mods[len(br.Mods)])
	}
	tags := bohemia.ParseDayZTags(string(info.Keywords))
	r := state.Raw
	if r.Queue != tags.Queue || r.FirstPerson != tags.FirstPerson || r.PrivateHive != tags.PrivateHive ||
		r.External != tags.External || r.Time != tags.Time || r.DayAcceleration != tags.DayAcceleration ||
		r.NightAcceleration != tags.NightAcceleration {
		t.Errorf("keywords: gamedig %+v, ours %+v", r, tags)
	}

	// And our side reads back what gamedig read, through the real client.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &a2s.Client{}
	defer c.Close()
	got, err := c.Rules(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := bohemia.Message(got.List)
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := bohemia.Decode(back); err != nil || len(dec.Mods) != len(br.Mods) || string(dec.Mods[2].Name) != "Dabs Framework" {
		t.Errorf("our decode: %+v, %v", dec, err)
	}
}
