// Command go-example is the conformance kit's Go implementation of both specs
// (the Office assignment-wake rate limit and delegation work requests), over
// SQLite through database/sql, served on protocol v1 by the kit's Go SDK.
//
//	go-example [-defect gate-before-dedup|stale-fence]
//
// The defects are deliberate bugs for showing that the kit catches them; the
// default is none.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"sync"

	conformance "conformancekit/sdk"
)

const (
	name    = "go-example"
	version = "0.1.0"
)

// defects are deliberate bugs, each violating one criterion.
type defects struct {
	gateBeforeDedup bool // the allowance evaluated before the duplicate lookup and coalescing (001.5)
	staleFence      bool // heartbeat and publish accept an older generation of the same holder (001.7)
}

// app is the whole implementation: the store, the clock the harness controls,
// and the memory a process holds beside the store.
type app struct {
	db      *sql.DB
	clock   *conformance.Clock
	mem     *memory
	defects defects
	openMu  sync.Mutex
}

// Open is called at the handshake, never before: a prelaunched process has not
// touched the store when it is handed one.
func (a *app) Open(store conformance.Store, clock *conformance.Clock) error {
	db, err := openStore(store.Path("store.sqlite3"))
	if err != nil {
		return err
	}
	a.db, a.clock, a.mem = db, clock, newMemory()
	return nil
}

// Reset empties the store and the memory: afterwards the process is as a fresh launch.
func (a *app) Reset() error {
	if err := emptyStore(a.db); err != nil {
		return err
	}
	a.mem = newMemory()
	return nil
}

func description() conformance.Description {
	return conformance.Description{
		Name:    name,
		Version: version,
		Capabilities: []conformance.Capability{
			conformance.CapOffice, conformance.CapWorkRequests,
			conformance.CapHookCountReadFailure, conformance.CapHookKeylessAssign,
			conformance.CapRestart,      // every write is committed to SQLite before its reply
			conformance.CapConcurrency,  // run_concurrently runs its calls on goroutines, each on its own connection
			conformance.CapReset,        // one process serves the whole run
			conformance.CapPrelaunch,    // the store is first opened at the handshake
			conformance.CapMultiprocess, // processes share nothing but the SQLite file (WAL, immediate transactions)
		},
		Office:       officeConstants(),
		WorkRequests: workRequestLimits(),
	}
}

func main() {
	defect := flag.String("defect", "", "a deliberate bug: gate-before-dedup or stale-fence")
	flag.Parse()
	impl := &app{}
	switch *defect {
	case "":
	case "gate-before-dedup":
		impl.defects.gateBeforeDedup = true
	case "stale-fence":
		impl.defects.staleFence = true
	default:
		fmt.Fprintf(os.Stderr, "unknown defect %q\n", *defect)
		os.Exit(2)
	}
	conformance.Main(description(), impl)
}
