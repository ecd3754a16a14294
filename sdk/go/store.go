package conformance

import (
	"errors"
	"os"
	"path/filepath"
)

// StoreEnv is the environment variable naming the store directory.
const StoreEnv = "CONFORMANCE_STORE"

// markerName is the file that says the store directory has been initialised.
const markerName = ".conformance-initialised"

// Store is the directory the harness gives a process for its durable state.
// It is empty when a scenario launches the process, kept across restarts
// within the scenario, and thrown away afterwards. The package hands it to
// Open at the handshake and never touches it before (capability prelaunch).
type Store struct {
	Dir string
}

// StoreFromEnv reads CONFORMANCE_STORE.
func StoreFromEnv() (Store, error) {
	dir := os.Getenv(StoreEnv)
	if dir == "" {
		return Store{}, errors.New(StoreEnv + " is not set")
	}
	return Store{Dir: dir}, nil
}

// Path names a file inside the store directory (an embedded database, say).
func (s Store) Path(name string) string { return filepath.Join(s.Dir, name) }

// Fresh tells whether this is the first launch of a scenario: true while the
// marker file is absent. An implementation whose data lives outside the
// directory (a database server) empties its database when Fresh is true and
// then calls MarkInitialised; later launches (restarts) find the marker and
// keep the data.
func (s Store) Fresh() (bool, error) {
	_, err := os.Stat(s.Path(markerName))
	if err == nil {
		return false, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// MarkInitialised leaves the marker file that Fresh looks for.
func (s Store) MarkInitialised() error {
	return os.WriteFile(s.Path(markerName), []byte("initialised\n"), 0o644)
}
