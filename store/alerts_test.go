package store

import (
	"context"
	"slices"
	"testing"
)

// TestAlertJournalSurvivesReopen: alert states and the outbox written
// through one Store are read back, in order, through the next one on the
// same database; done alerts leave the outbox, a nil state deletes one.
func TestAlertJournalSurvivesReopen(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		ids, err := st.SaveAlerts(ctx, map[string][]byte{"a": []byte(`{"s":1}`), "b": []byte(`{"s":2}`)},
			[]OutboxAlert{{Webhook: "ops", Time: t0, Alert: []byte(`{"kind":"down"}`)}, {Webhook: "chat", Time: t0, Alert: []byte(`{"kind":"up"}`)}}, nil)
		must(t, err)
		if len(ids) != 2 || ids[0] == ids[1] {
			t.Fatalf("ids %v", ids)
		}
		more, err := st.SaveAlerts(ctx, map[string][]byte{"b": nil}, []OutboxAlert{{Webhook: "ops", Time: t0, Alert: []byte(`{"kind":"map"}`)}}, ids[:1])
		must(t, err)
		must(t, st.Close())

		st = e.open(t)
		log, err := st.LoadAlerts(ctx)
		must(t, err)
		if len(log.States) != 1 || string(log.States["a"]) != `{"s":1}` {
			t.Errorf("states %q", log.States)
		}
		var got []string
		var gotIDs []int64
		for _, o := range log.Outbox {
			got = append(got, o.Webhook+" "+string(o.Alert))
			gotIDs = append(gotIDs, o.ID)
			if !o.Time.Equal(t0) {
				t.Errorf("time %v", o.Time)
			}
		}
		if want := []string{`chat {"kind":"up"}`, `ops {"kind":"map"}`}; !slices.Equal(got, want) {
			t.Errorf("outbox %q, want %q", got, want)
		}
		if want := []int64{ids[1], more[0]}; !slices.Equal(gotIDs, want) {
			t.Errorf("outbox ids %v, want %v", gotIDs, want)
		}
		must(t, st.Check(ctx))
	})
}
