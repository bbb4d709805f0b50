package blob

import "errors"

// ErrNotFound is returned by Open when no blob has the ID.
var ErrNotFound = errors.New("blob: not found")

// ErrInvalidID is returned when an ID is not one this package generated;
// such IDs are refused before any path is built from them.
var ErrInvalidID = errors.New("blob: invalid id")
