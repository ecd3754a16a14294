package conformance

import (
	"sync"
	"time"
)

// StartInstant is where the harness sets the clock after every launch and reset.
var StartInstant = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is the controllable clock the harness owns. The package answers
// set_clock and advance_clock on it; an implementation reads time only from
// Now, never from the wall clock or a database's now(). It is safe for use by
// the goroutines of a concurrent batch.
type Clock struct {
	mu  sync.RWMutex
	now time.Time
}

// NewClock returns a clock reading StartInstant.
func NewClock() *Clock { return &Clock{now: StartInstant} }

// Now is the current reading, in UTC, at microsecond precision.
func (c *Clock) Now() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.now
}

// Set jumps to t (which may be earlier than the current reading).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC().Truncate(time.Microsecond)
	c.mu.Unlock()
}

// Advance moves the clock forward by d and answers the new reading.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d).Truncate(time.Microsecond)
	return c.now
}
