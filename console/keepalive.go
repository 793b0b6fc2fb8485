package console

import (
	"sync/atomic"
	"time"
)

// Idle is when a session was last used, for its keep-alive: the session
// touches it as each command starts and ends. The zero value is a
// session never used. It is safe for concurrent use.
type Idle struct {
	last atomic.Int64 // Unix ns
}

// Touch records a use now.
func (i *Idle) Touch() { i.last.Store(time.Now().UnixNano()) }

// Since returns how long ago the last use was.
func (i *Idle) Since() time.Duration { return time.Since(time.Unix(0, i.last.Load())) }

// KeepAlive runs a session's keep-alive on its own timer, which no caller
// can block: whenever the session has gone unused for every, it calls
// probe, on KeepAlive's goroutine, until done is closed. A use in between
// puts the next probe off.
func (i *Idle) KeepAlive(done <-chan struct{}, every time.Duration, probe func()) {
	Watch(done, nil, nil, every, i.last.Load, func() error {
		probe()
		return nil
	})
}
