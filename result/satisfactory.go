package result

import (
	"strconv"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/satisfactory"
)

// Satisfactory holds a Satisfactory server's reply to the Lightweight
// Query: the [Detail] of its Result. Its one section is info.
type Satisfactory struct {
	// State is the reply; nil when the query failed.
	State *satisfactory.ServerState
}

// Answered reports whether the server replied.
func (s *Satisfactory) Answered() bool { return s.State != nil }

// PlayerList returns nil: the Lightweight Query lists no players (the
// HTTPS API's count needs a login).
func (*Satisfactory) PlayerList() []Player { return nil }

func (*Satisfactory) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// appendSections appends "info": {state, state_code, netcl, flags,
// sub_states: [{id, version}], name}.
func (s *Satisfactory) appendSections(o jsonenc.Object) jsonenc.Object {
	if s.State == nil {
		return o
	}
	st := s.State
	o.Key("info")
	in := o.Sub()
	in.Str("state", st.State.String())
	in.Uint("state_code", uint64(st.State))
	in.Uint("netcl", uint64(st.NetCL))
	in.Uint("flags", st.Flags)
	in.List("sub_states", len(st.SubStates), func(e *jsonenc.Object, i int) {
		e.Uint("id", uint64(st.SubStates[i].ID))
		e.Uint("version", uint64(st.SubStates[i].Version))
	})
	in.Text("name", st.Name)
	o.B = in.End()
	return o
}

// SetSatisfactory records a Satisfactory server's reply (res.State), or
// the error of its poll, as the info section, and fills the Summary
// (the name, and the build as the version) and Ping from it.
func (r *Result) SetSatisfactory(res *satisfactory.Result) {
	s, ok := r.Detail.(*Satisfactory)
	if !ok {
		s = new(Satisfactory)
		r.Detail = s
	}
	s.State, r.Summary, r.Ping = nil, Summary{}, 0
	err := res.Err
	switch {
	case err == nil && res.State == nil:
		err = errNoAnswer
	case err == nil:
		s.State, r.Ping = res.State, res.RTT
		v := new(summaryValues)
		var vb [20]byte
		v.setStrings(res.State.Name, nil, nil, strconv.AppendUint(vb[:0], uint64(res.State.NetCL), 10), nil)
		r.Summary.Name, r.Summary.Version = &v.strs[0], &v.strs[3]
	}
	r.setSection(SectionInfo, err)
}
