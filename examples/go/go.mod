module conformancekit/examples/go

go 1.19

require (
	conformancekit/sdk v0.0.0
	github.com/mattn/go-sqlite3 v1.14.16
)

// No module proxy is used: the SDK is this repository's sdk/go, and the SQLite
// driver is Debian's packaged source (golang-github-mattn-go-sqlite3-dev), built
// with cgo against the system libsqlite3. Build with GOPROXY=off GOFLAGS=-mod=mod.
replace conformancekit/sdk => ../../sdk/go

replace github.com/mattn/go-sqlite3 => /usr/share/gocode/src/github.com/mattn/go-sqlite3
