package battleye

import "fmt"

// Reassembler collects the parts of one multi-part answer, in any order,
// ignoring duplicates. It holds at most [MaxParts] parts and max bytes of
// text, so a peer that lies about the count or floods parts costs a
// bounded amount. The zero value is not usable; see [NewReassembler].
type Reassembler struct {
	parts [][]byte
	have  int
	size  int
	max   int
}

// NewReassembler returns a reassembler that refuses answers larger than
// max bytes.
func NewReassembler(max int) *Reassembler { return &Reassembler{max: max} }

// Add takes one part (a packet with Total > 0; its Data is copied) and
// reports whether the answer is complete. A part that disagrees with the
// first on the count, or that would take the answer past the limit, is an
// error; a duplicate is ignored.
func (r *Reassembler) Add(p Packet) (done bool, err error) {
	if p.Total == 0 || p.Index >= p.Total {
		return false, fmt.Errorf("battleye: part %d of %d: %w", p.Index, p.Total, ErrBadPart)
	}
	if r.parts == nil {
		r.parts = make([][]byte, p.Total)
	}
	if int(p.Total) != len(r.parts) {
		return false, fmt.Errorf("battleye: part %d of %d in an answer of %d parts: %w", p.Index, p.Total, len(r.parts), ErrBadPart)
	}
	if r.parts[p.Index] != nil {
		return r.Done(), nil
	}
	if r.size+len(p.Data) > r.max {
		return false, &SizeError{Size: r.size + len(p.Data), Max: r.max}
	}
	r.parts[p.Index] = append(make([]byte, 0, len(p.Data)), p.Data...)
	r.have++
	r.size += len(p.Data)
	return r.Done(), nil
}

// Done reports whether every part is in.
func (r *Reassembler) Done() bool { return r.parts != nil && r.have == len(r.parts) }

// Missing returns how many parts are still to come, and how many there
// are in all (0 before the first part).
func (r *Reassembler) Missing() (missing, total int) { return len(r.parts) - r.have, len(r.parts) }

// Bytes returns the answer's text, the parts joined in order; parts not
// yet in are left out.
func (r *Reassembler) Bytes() []byte {
	out := make([]byte, 0, r.size)
	for _, p := range r.parts {
		out = append(out, p...)
	}
	return out
}

// SizeError reports an answer larger than the limit in force. It matches
// [ErrResponseTooLarge].
type SizeError struct {
	Size int // bytes received so far
	Max  int // the limit
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("battleye: answer of %d bytes or more, above the limit of %d", e.Size, e.Max)
}

// Unwrap returns ErrResponseTooLarge.
func (e *SizeError) Unwrap() error { return ErrResponseTooLarge }
