package iam

import "errors"

// Sentinels of identity management. The admin API maps each to its wire
// code; every one means nothing was changed.
var (
	// ErrInvalidName is returned for a user, group, policy or access key
	// name that is empty, too long, holds reserved characters or is the
	// root or service credential's.
	ErrInvalidName = errors.New("invalid name")
	// ErrUserExists is returned by AddUser for a name already in use.
	ErrUserExists = errors.New("user already exists")
	// ErrNoSuchUser is returned when a named user does not exist.
	ErrNoSuchUser = errors.New("no such user")
	// ErrNoSuchGroup is returned when a named group does not exist.
	ErrNoSuchGroup = errors.New("no such group")
	// ErrGroupNotEmpty is returned when removing a group that has members.
	ErrGroupNotEmpty = errors.New("group has members")
	// ErrNoSuchPolicy is returned when a named policy does not exist.
	ErrNoSuchPolicy = errors.New("no such policy")
	// ErrPolicyAttached is returned when removing a policy still attached
	// to a user or group.
	ErrPolicyAttached = errors.New("policy is attached")
	// ErrPolicyNotAttached is returned by Detach for a policy the entity
	// does not have.
	ErrPolicyNotAttached = errors.New("policy is not attached")
	// ErrBuiltinPolicy is returned when creating or removing a policy with a
	// built-in name.
	ErrBuiltinPolicy = errors.New("built-in policies cannot be changed")
	// ErrNoSuchAccessKey is returned when a named access key does not exist.
	ErrNoSuchAccessKey = errors.New("no such access key")
	// ErrAccessKeyExists is returned when creating an access key whose name
	// is already in use by a user or key.
	ErrAccessKeyExists = errors.New("access key already exists")
	// ErrInvalidExpiry is returned for an access key expiry in the past.
	ErrInvalidExpiry = errors.New("invalid expiry")
	// ErrSealed is returned when a stored secret cannot be decrypted under
	// the site's data key (a damaged record).
	ErrSealed = errors.New("iam: secret does not decrypt under the site's data key")
	// ErrInvalidRecord is returned by Apply for a record received from a
	// peer that is malformed (unknown kind, payload not matching its kind,
	// missing secret); nothing is stored.
	ErrInvalidRecord = errors.New("iam: invalid replicated record")
)
