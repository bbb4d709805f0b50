package config

import (
	"errors"
	"strings"
)

// ErrUnknownSubsystem is returned by Get and Set when the subsystem is not in
// the key table.
var ErrUnknownSubsystem = errors.New("unknown config subsystem")

// ErrUnknownKey is one problem of a ValidationError: Set named a key the
// subsystem does not have.
var ErrUnknownKey = errors.New("unknown key")

// ErrInvalidValue is one problem of a ValidationError (a value Set was given
// does not parse for its key), and is wrapped by New when an environment
// override does not parse.
var ErrInvalidValue = errors.New("invalid value")

// ErrSyntax is one problem reported by ParseKV: an argument is not key=value,
// or names a key twice.
var ErrSyntax = errors.New("invalid key=value argument")

// ErrRefused is returned by Set when a SetGuard refused the change; the
// guard's own error is wrapped alongside it.
var ErrRefused = errors.New("config change refused")

// ValidationError reports every problem found in one Set or ParseKV call, so
// that an operator fixes them all in one go. Each problem wraps
// ErrUnknownKey, ErrInvalidValue or ErrSyntax; errors.Is sees through it.
type ValidationError struct {
	Subsys   string // empty for ParseKV
	Problems []error
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	prefix := "config"
	if e.Subsys != "" {
		prefix += " " + e.Subsys
	}
	return prefix + ": " + strings.Join(msgs, "; ")
}

// Unwrap returns the individual problems.
func (e *ValidationError) Unwrap() []error { return e.Problems }
