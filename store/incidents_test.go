package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func outage(smp Sample, since time.Time, cause string) Sample {
	smp.Outage = &Outage{Since: since, Cause: cause, Detail: cause + " detail"}
	return smp
}

func recovered(smp Sample) Sample {
	smp.Recovered = true
	return smp
}

func TestIncidents(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithClock(newClock(min_(100)).now))
		syncNames(t, st, "a", "b")
		must(t, st.Write(ctx, []Sample{up("a", min_(0), 1), up("b", min_(0), 1)}))
		must(t, st.Write(ctx, []Sample{down("a", min_(1)), down("b", min_(1))}))
		must(t, st.Write(ctx, []Sample{outage(down("a", min_(2)), min_(1), "timeout"), outage(down("b", min_(2)), min_(1), "unreachable")}))
		// A second outage while one is open (a monitor restarted) opens nothing.
		must(t, st.Write(ctx, []Sample{outage(down("a", min_(3)), min_(3), "protocol")}))
		must(t, st.Write(ctx, []Sample{recovered(up("a", min_(5), 2))}))
		m := outage(down("a", min_(20)), min_(19), "protocol")
		m.Outage.Maintenance = true
		must(t, st.Write(ctx, []Sample{m}))

		all, err := st.Incidents(ctx, IncidentQuery{})
		must(t, err)
		if len(all) != 3 {
			t.Fatalf("got %d incidents, want 3: %+v", len(all), all)
		}
		if in := all[0]; in.Server != "a" || !in.Start.Equal(min_(19)) || in.End != nil || in.Cause != "protocol" || !in.Maintenance {
			t.Errorf("newest: %+v", in)
		}
		var first Incident
		for _, in := range all {
			if in.Server == "a" && in.Start.Equal(min_(1)) {
				first = in
			}
		}
		if first.End == nil || !first.End.Equal(min_(5)) || first.Cause != "timeout" || first.Detail != "timeout detail" || first.Maintenance {
			t.Errorf("a's first incident: %+v", first)
		}
		b, err := st.Incidents(ctx, IncidentQuery{Server: "b"})
		must(t, err)
		if len(b) != 1 || b[0].Cause != "unreachable" || b[0].End != nil {
			t.Errorf("b: %+v", b)
		}
		// Overlap: [10, 15) holds none; [4, 6) holds a's first.
		if got, _ := st.Incidents(ctx, IncidentQuery{Server: "a", From: min_(10), To: min_(15)}); len(got) != 0 {
			t.Errorf("[10,15): %+v", got)
		}
		if got, _ := st.Incidents(ctx, IncidentQuery{Server: "a", From: min_(4), To: min_(6)}); len(got) != 1 || !got[0].Start.Equal(min_(1)) {
			t.Errorf("[4,6): %+v", got)
		}
		if got, _ := st.Incidents(ctx, IncidentQuery{Limit: 1}); len(got) != 1 {
			t.Errorf("limit 1: %d", len(got))
		}
		if _, err := st.Incidents(ctx, IncidentQuery{Server: "nope"}); !errors.Is(err, ErrUnknownServer) {
			t.Errorf("unknown server: %v", err)
		}

		// A store opened again knows which incidents are open: b's
		// recovery ends it, and a new outage of b opens another.
		must(t, st.Close())
		st = e.open(t, WithClock(newClock(min_(100)).now))
		must(t, st.Write(ctx, []Sample{outage(down("b", min_(30)), min_(30), "timeout")}))
		must(t, st.Write(ctx, []Sample{recovered(up("b", min_(31), 0))}))
		b, err = st.Incidents(ctx, IncidentQuery{Server: "b"})
		must(t, err)
		if len(b) != 1 || b[0].End == nil || !b[0].End.Equal(min_(31)) || !b[0].Start.Equal(min_(1)) {
			t.Errorf("b after reopen: %+v", b)
		}
	})
}

func TestWindows(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithClock(newClock(min_(5)).now))
		a, err := st.AddWindow(ctx, `{"servers":["a"]}`)
		must(t, err)
		b, err := st.AddWindow(ctx, `{"labels":{"region":"eu"}}`)
		must(t, err)
		list, err := st.Windows(ctx)
		must(t, err)
		if len(list) != 2 || list[0].ID != a || list[1].Spec != `{"labels":{"region":"eu"}}` || !list[0].Created.Equal(min_(5)) {
			t.Errorf("windows %+v", list)
		}
		if ok, err := st.DeleteWindow(ctx, a); !ok || err != nil {
			t.Errorf("delete: %v %v", ok, err)
		}
		if ok, _ := st.DeleteWindow(ctx, a); ok {
			t.Error("deleted twice")
		}
		list, _ = st.Windows(ctx)
		if len(list) != 1 || list[0].ID != b {
			t.Errorf("after delete %+v", list)
		}
	})
}
