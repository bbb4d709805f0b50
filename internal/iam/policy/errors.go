package policy

import (
	"errors"
	"fmt"
)

// ErrInvalidPolicy is returned by Parse when a document is not valid JSON,
// lacks a required field, or names an unknown action, operator or effect.
// The wrapping *Error says where.
var ErrInvalidPolicy = errors.New("invalid policy")

// Error locates a problem in a policy document: the statement index (-1
// for the document itself) and the field.
type Error struct {
	Statement int
	Field     string
	Msg       string
}

func (e *Error) Error() string {
	if e.Statement < 0 {
		if e.Field == "" {
			return fmt.Sprintf("invalid policy: %s", e.Msg)
		}
		return fmt.Sprintf("invalid policy: %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("invalid policy: Statement[%d].%s: %s", e.Statement, e.Field, e.Msg)
}

// Unwrap makes every *Error match ErrInvalidPolicy.
func (e *Error) Unwrap() error { return ErrInvalidPolicy }

func errAt(stmt int, field, format string, args ...any) error {
	return &Error{Statement: stmt, Field: field, Msg: fmt.Sprintf(format, args...)}
}
