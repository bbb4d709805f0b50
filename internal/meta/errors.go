package meta

import "errors"

// ErrNotFound is returned by Store.Get when the key holds no value.
var ErrNotFound = errors.New("meta: key not found")

// ErrClosed is returned by any operation on a Store after Close.
var ErrClosed = errors.New("meta: store closed")
