package ogp

import "fmt"

// MaxFragments is the most fragments a split answer can have: the
// SplitPacketCount field is one byte.
const MaxFragments = 255

// appendFragments cuts body into split answer datagrams of at most max
// bytes each (headers included) and calls emit for each, in order. h is
// the answer header; fragments after the first drop the challenge, and
// every fragment gets FlagSplit. When the answer fits one datagram it is
// sent whole, without FlagSplit. Fragments are built in buf, reused
// between calls to emit.
func appendFragments(buf []byte, h Header, body []byte, max int, emit func([]byte)) ([]byte, error) {
	if h.Len()+len(body) <= max {
		buf, _ = h.AppendBinary(buf[:0])
		emit(append(buf, body...))
		return buf, nil
	}
	h.Flags |= FlagSplit
	first := h
	rest := h
	rest.Flags &^= FlagChallenge
	cap0, capN := max-first.Len(), max-rest.Len()
	if cap0 <= 0 || capN <= 0 {
		return buf, fmt.Errorf("%w: packet size %d holds no body", ErrTooLarge, max)
	}
	n := 1
	if len(body) > cap0 {
		n += (len(body) - cap0 + capN - 1) / capN
	}
	if n > MaxFragments {
		return buf, fmt.Errorf("%w: answer of %d bytes needs %d fragments of %d bytes", ErrTooLarge, len(body), n, max)
	}
	for i := 0; i < n; i++ {
		fh, size := rest, capN
		if i == 0 {
			fh, size = first, cap0
		}
		fh.SplitCount, fh.SplitNo = uint8(n), uint8(i)
		size = min(size, len(body))
		buf, _ = fh.AppendBinary(buf[:0])
		emit(append(buf, body[:size]...))
		body = body[size:]
	}
	return buf, nil
}

// reassembly collects the fragments of one split answer (see the package
// doc). The zero value is ready; max caps the total body size.
type reassembly struct {
	count int
	got   int
	size  int
	frags [][]byte
	first Header // header of fragment 0
}

// add stores one fragment and returns the whole body once every fragment
// has arrived. Duplicates are ignored (the first copy wins).
func (r *reassembly) add(h Header, body []byte, max int) (Header, []byte, error) {
	count, no := int(h.SplitCount), int(h.SplitNo)
	switch {
	case count == 0 || no >= count:
		return h, nil, fmt.Errorf("%w: fragment %d of %d", ErrBadFragment, no, count)
	case r.count != 0 && count != r.count:
		return h, nil, fmt.Errorf("%w: fragment count changed from %d to %d", ErrBadFragment, r.count, count)
	case r.size+len(body) > max:
		return h, nil, fmt.Errorf("%w: split answer over %d bytes", ErrTooLarge, max)
	}
	if r.frags == nil {
		r.count = count
		r.frags = make([][]byte, count)
	}
	if r.frags[no] != nil {
		return h, nil, nil
	}
	r.frags[no] = append(make([]byte, 0, len(body)), body...)
	r.got++
	r.size += len(body)
	if no == 0 {
		r.first = h
	}
	if r.got < r.count {
		return h, nil, nil
	}
	whole := make([]byte, 0, r.size)
	for _, f := range r.frags {
		whole = append(whole, f...)
	}
	return r.first, whole, nil
}

// progress describes a partial reassembly for error messages.
func (r *reassembly) progress() string {
	if r == nil || r.count == 0 {
		return ""
	}
	return fmt.Sprintf(" (got %d of %d fragments)", r.got, r.count)
}
