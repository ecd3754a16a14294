package conformance

// Implementation is what every implementation provides. Open is called once,
// at the first handshake, with the store directory and the clock the harness
// controls: an implementation that touches the store only there may declare
// the capability prelaunch.
type Implementation interface {
	Open(store Store, clock *Clock) error
}

// Resetter is implemented by an implementation that declares reset: Reset
// empties the store and forgets everything held in memory (counters, logs,
// armed hooks), so that the process is indistinguishable from a fresh launch
// on an empty store. The package sets the clock back to StartInstant after it.
type Resetter interface {
	Reset() error
}
