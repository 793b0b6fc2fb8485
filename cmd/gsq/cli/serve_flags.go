package cli

import (
	"fmt"
	"math"
	"strconv"
)

// numberFlag is a numeric flag with a range, whose bad values get an error
// in plain words that gives the range ("want a number from 0 to 1"). It is
// a pflag.Value.
type numberFlag[T int | uint32 | uint64 | float64] struct {
	p        *T
	min, max T
}

func (f *numberFlag[T]) Set(s string) error {
	var v T
	var err error
	switch p := any(&v).(type) {
	case *float64:
		*p, err = strconv.ParseFloat(s, 64)
	case *int:
		*p, err = strconv.Atoi(s)
	case *uint32:
		var u uint64
		u, err = strconv.ParseUint(s, 10, 32)
		*p = uint32(u)
	case *uint64:
		*p, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil || !(v >= f.min && v <= f.max) { // NaN fails too
		return fmt.Errorf("want %s", f.want())
	}
	*f.p = v
	return nil
}

// want says what the flag takes.
func (f *numberFlag[T]) want() string {
	what := "a whole number"
	if _, ok := any(f.min).(float64); ok {
		what = "a number"
	}
	lo, hi := float64(f.min), float64(f.max)
	switch {
	case math.IsInf(lo, -1) && math.IsInf(hi, 1):
		return what
	case hi > math.MaxUint32:
		return fmt.Sprintf("%s of %v or more", what, f.min)
	}
	return fmt.Sprintf("%s from %v to %v", what, f.min, f.max)
}

func (f *numberFlag[T]) String() string { return fmt.Sprint(*f.p) }

// Type is "number", a name flagError does not rewrite: the range in the
// error from Set is the better message. Usage strings name the value with
// a back-quoted word instead ("run `N` servers").
func (f *numberFlag[T]) Type() string { return "number" }
