package conformance

import (
	"errors"
	"fmt"
)

// Error is a typed error reply. Definite is true when the operation certainly
// did not happen (nothing was written), false when it may have happened.
type Error struct {
	Code     ErrorCode
	Definite bool
	Message  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Refuse is a definite refusal: the operation did not happen.
func Refuse(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Definite: true, Message: fmt.Sprintf(format, args...)}
}

// Indeterminate says the operation may or may not have happened (a timeout, a
// dropped connection, a failure after a write). The kit treats it as unknown.
func Indeterminate(format string, args ...any) *Error {
	return &Error{Code: CodeIndeterminate, Definite: false, Message: fmt.Sprintf(format, args...)}
}

// ErrNotSupported, returned by an operation (or wrapped), is answered with the
// not-supported reply form instead of an error.
var ErrNotSupported = errors.New("not supported")

// asError maps any error an operation returned onto the wire's error body. An
// error that is not an *Error is a bug or an unexpected failure: `internal`,
// and not definite, since it may have come after a write.
func asError(err error) ErrorBody {
	var typed *Error
	if errors.As(err, &typed) {
		return ErrorBody{Code: typed.Code, Definite: typed.Definite, Message: typed.Message}
	}
	return ErrorBody{Code: CodeInternal, Definite: false, Message: err.Error()}
}
