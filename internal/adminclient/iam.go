package adminclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Paths of the identity and access calls. A name follows each collection
// path; PathStatusSuffix and PathMembersSuffix follow a name.
const (
	PathIAM            = "/twinlake/admin/v1/iam"
	PathUsers          = PathIAM + "/users"
	PathGroups         = PathIAM + "/groups"
	PathPolicies       = PathIAM + "/policies"
	PathPolicyAttach   = PathIAM + "/policy-attach"
	PathPolicyDetach   = PathIAM + "/policy-detach"
	PathPolicyEntities = PathIAM + "/policy-entities"
	PathAccessKeys     = PathIAM + "/access-keys"
	PathStatusSuffix   = "/status"
	PathMembersSuffix  = "/members"
)

// Error codes of the identity and access calls. Each means nothing changed.
const (
	CodeInvalidName       = "InvalidName"            // 400: bad user, group, policy or key name
	CodeInvalidSecretKey  = "InvalidSecretKey"       // 400: secret shorter than 8 (or longer than 128) characters
	CodeMalformedPolicy   = "MalformedPolicy"        // 400: the message says where
	CodeInvalidExpiry     = "InvalidExpiry"          // 400: expiry in the past
	CodeUserExists        = "UserAlreadyExists"      // 409
	CodeAccessKeyExists   = "AccessKeyAlreadyExists" // 409
	CodeNoSuchUser        = "NoSuchUser"             // 404
	CodeNoSuchGroup       = "NoSuchGroup"            // 404
	CodeNoSuchPolicy      = "NoSuchPolicy"           // 404
	CodeNoSuchAccessKey   = "NoSuchAccessKey"        // 404
	CodeGroupNotEmpty     = "GroupNotEmpty"          // 409
	CodePolicyInUse       = "PolicyInUse"            // 409: still attached
	CodePolicyNotAttached = "PolicyNotAttached"      // 409
	CodeBuiltinPolicy     = "BuiltinPolicy"          // 409: built-ins cannot change
)

// User describes a user; its name is its access key.
type User struct {
	Name     string    `json:"name"`
	Enabled  bool      `json:"enabled"`
	Policies []string  `json:"policies"`
	Groups   []string  `json:"groups"`
	Created  time.Time `json:"created"`
}

// UserList is the answer of a user list.
type UserList struct {
	Users []User `json:"users"`
}

// UserAddRequest is the body of a user add (PUT PathUsers/NAME).
type UserAddRequest struct {
	SecretKey string `json:"secretKey"`
}

// StatusRequest enables or disables a user, group or access key.
type StatusRequest struct {
	Enabled bool `json:"enabled"`
}

// Group describes a group.
type Group struct {
	Name     string    `json:"name"`
	Enabled  bool      `json:"enabled"`
	Members  []string  `json:"members"`
	Policies []string  `json:"policies"`
	Created  time.Time `json:"created"`
}

// GroupList is the answer of a group list.
type GroupList struct {
	Groups []Group `json:"groups"`
}

// MembersRequest adds members to a group.
type MembersRequest struct {
	Members []string `json:"members"`
}

// Policy is a named policy and its document.
type Policy struct {
	Name     string          `json:"name"`
	Builtin  bool            `json:"builtin,omitempty"`
	Document json.RawMessage `json:"document"`
}

// PolicyList is the answer of a policy list.
type PolicyList struct {
	Policies []Policy `json:"policies"`
}

// AttachRequest attaches or detaches policies to or from exactly one of a
// user or a group.
type AttachRequest struct {
	Policies []string `json:"policies"`
	User     string   `json:"user,omitempty"`
	Group    string   `json:"group,omitempty"`
}

// PolicyEntities lists who one policy is attached to.
type PolicyEntities struct {
	Policy string   `json:"policy"`
	Users  []string `json:"users"`
	Groups []string `json:"groups"`
}

// PolicyEntitiesList is the answer of policy entities.
type PolicyEntitiesList struct {
	Policies []PolicyEntities `json:"policies"`
}

// AccessKeyCreateRequest creates an access key for User (empty: the
// caller). Empty keys are generated; Policy is an optional session policy
// document; a zero Expiry never expires.
type AccessKeyCreateRequest struct {
	User        string          `json:"user,omitempty"`
	AccessKey   string          `json:"accessKey,omitempty"`
	SecretKey   string          `json:"secretKey,omitempty"`
	Policy      json.RawMessage `json:"policy,omitempty"`
	Expiry      time.Time       `json:"expiry,omitzero"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
}

// AccessKeyCredentials is the answer of an access key create: the only
// time the secret is shown.
type AccessKeyCredentials struct {
	AccessKey string    `json:"accessKey"`
	SecretKey string    `json:"secretKey"`
	Expiry    time.Time `json:"expiry,omitzero"`
}

// AccessKey describes an access key, never its secret.
type AccessKey struct {
	AccessKey   string          `json:"accessKey"`
	User        string          `json:"user"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Enabled     bool            `json:"enabled"`
	Expiry      time.Time       `json:"expiry,omitzero"`
	Policy      json.RawMessage `json:"policy,omitempty"`
	Created     time.Time       `json:"created"`
}

// AccessKeyEditRequest changes an access key; nil fields stay as they are.
// An empty Policy removes the session policy; a zero Expiry removes the
// expiry.
type AccessKeyEditRequest struct {
	SecretKey   *string          `json:"secretKey,omitempty"`
	Policy      *json.RawMessage `json:"policy,omitempty"`
	Expiry      *time.Time       `json:"expiry,omitempty"`
	Name        *string          `json:"name,omitempty"`
	Description *string          `json:"description,omitempty"`
}

// AccessKeyList is the answer of an access key list.
type AccessKeyList struct {
	AccessKeys []AccessKey `json:"accessKeys"`
}

func itemPath(collection, name string) string { return collection + "/" + url.PathEscape(name) }

// noAnswer sends a request whose answer has no body worth reading.
func (c *Client) noAnswer(ctx context.Context, method, path string, in any) error {
	var out struct{}
	return c.call(ctx, method, path, in, &out)
}

// AddUser creates an enabled user with the given access and secret key.
func (c *Client) AddUser(ctx context.Context, accessKey, secretKey string) error {
	return c.noAnswer(ctx, http.MethodPut, itemPath(PathUsers, accessKey), UserAddRequest{SecretKey: secretKey})
}

// RemoveUser deletes a user with its access keys and memberships.
func (c *Client) RemoveUser(ctx context.Context, name string) error {
	return c.noAnswer(ctx, http.MethodDelete, itemPath(PathUsers, name), nil)
}

// ListUsers returns every user.
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	var l UserList
	err := c.call(ctx, http.MethodGet, PathUsers, nil, &l)
	return l.Users, err
}

// UserInfo returns one user.
func (c *Client) UserInfo(ctx context.Context, name string) (User, error) {
	var u User
	err := c.call(ctx, http.MethodGet, itemPath(PathUsers, name), nil, &u)
	return u, err
}

// SetUserStatus enables or disables a user.
func (c *Client) SetUserStatus(ctx context.Context, name string, enabled bool) error {
	return c.noAnswer(ctx, http.MethodPut, itemPath(PathUsers, name)+PathStatusSuffix, StatusRequest{Enabled: enabled})
}

// AddGroupMembers creates the group if needed and adds members to it.
func (c *Client) AddGroupMembers(ctx context.Context, group string, members []string) error {
	return c.noAnswer(ctx, http.MethodPut, itemPath(PathGroups, group)+PathMembersSuffix, MembersRequest{Members: members})
}

// RemoveGroupMembers removes members from a group; with none it removes
// the (empty) group.
func (c *Client) RemoveGroupMembers(ctx context.Context, group string, members []string) error {
	if len(members) == 0 {
		return c.noAnswer(ctx, http.MethodDelete, itemPath(PathGroups, group), nil)
	}
	var out struct{}
	return c.callQuery(ctx, http.MethodDelete, itemPath(PathGroups, group)+PathMembersSuffix, url.Values{"member": members}, &out)
}

// ListGroups returns every group.
func (c *Client) ListGroups(ctx context.Context) ([]Group, error) {
	var l GroupList
	err := c.call(ctx, http.MethodGet, PathGroups, nil, &l)
	return l.Groups, err
}

// GroupInfo returns one group.
func (c *Client) GroupInfo(ctx context.Context, name string) (Group, error) {
	var g Group
	err := c.call(ctx, http.MethodGet, itemPath(PathGroups, name), nil, &g)
	return g, err
}

// SetGroupStatus enables or disables a group.
func (c *Client) SetGroupStatus(ctx context.Context, name string, enabled bool) error {
	return c.noAnswer(ctx, http.MethodPut, itemPath(PathGroups, name)+PathStatusSuffix, StatusRequest{Enabled: enabled})
}

// CreatePolicy creates or replaces a named policy from its JSON document,
// sent as given so that the server reports where a malformed one is wrong.
func (c *Client) CreatePolicy(ctx context.Context, name string, document []byte) error {
	resp, err := c.do(ctx, http.MethodPut, itemPath(PathPolicies, name), nil, document)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

// RemovePolicy deletes a named policy that is attached to nothing.
func (c *Client) RemovePolicy(ctx context.Context, name string) error {
	return c.noAnswer(ctx, http.MethodDelete, itemPath(PathPolicies, name), nil)
}

// ListPolicies returns every policy, built-ins included.
func (c *Client) ListPolicies(ctx context.Context) ([]Policy, error) {
	var l PolicyList
	err := c.call(ctx, http.MethodGet, PathPolicies, nil, &l)
	return l.Policies, err
}

// PolicyInfo returns one policy.
func (c *Client) PolicyInfo(ctx context.Context, name string) (Policy, error) {
	var p Policy
	err := c.call(ctx, http.MethodGet, itemPath(PathPolicies, name), nil, &p)
	return p, err
}

// AttachPolicy attaches policies to a user or a group.
func (c *Client) AttachPolicy(ctx context.Context, req AttachRequest) error {
	return c.noAnswer(ctx, http.MethodPost, PathPolicyAttach, req)
}

// DetachPolicy detaches policies from a user or a group.
func (c *Client) DetachPolicy(ctx context.Context, req AttachRequest) error {
	return c.noAnswer(ctx, http.MethodPost, PathPolicyDetach, req)
}

// PolicyEntities returns, for every attached policy, its users and groups.
func (c *Client) PolicyEntities(ctx context.Context) ([]PolicyEntities, error) {
	var l PolicyEntitiesList
	err := c.call(ctx, http.MethodGet, PathPolicyEntities, nil, &l)
	return l.Policies, err
}

// CreateAccessKey creates an access key and returns its credentials.
func (c *Client) CreateAccessKey(ctx context.Context, req AccessKeyCreateRequest) (AccessKeyCredentials, error) {
	var out AccessKeyCredentials
	err := c.call(ctx, http.MethodPost, PathAccessKeys, req, &out)
	return out, err
}

// ListAccessKeys returns the access keys of user ("" for the caller's; root
// sees every key with all=true).
func (c *Client) ListAccessKeys(ctx context.Context, user string, all bool) ([]AccessKey, error) {
	var l AccessKeyList
	q := url.Values{}
	if user != "" {
		q.Set("user", user)
	}
	if all {
		q.Set("all", "true")
	}
	err := c.callQuery(ctx, http.MethodGet, PathAccessKeys, q, &l)
	return l.AccessKeys, err
}

// AccessKeyInfo returns one access key.
func (c *Client) AccessKeyInfo(ctx context.Context, accessKey string) (AccessKey, error) {
	var k AccessKey
	err := c.call(ctx, http.MethodGet, itemPath(PathAccessKeys, accessKey), nil, &k)
	return k, err
}

// RemoveAccessKey deletes an access key.
func (c *Client) RemoveAccessKey(ctx context.Context, accessKey string) error {
	return c.noAnswer(ctx, http.MethodDelete, itemPath(PathAccessKeys, accessKey), nil)
}

// SetAccessKeyStatus enables or disables an access key.
func (c *Client) SetAccessKeyStatus(ctx context.Context, accessKey string, enabled bool) error {
	return c.noAnswer(ctx, http.MethodPut, itemPath(PathAccessKeys, accessKey)+PathStatusSuffix, StatusRequest{Enabled: enabled})
}

// EditAccessKey changes an access key's secret, session policy, expiry,
// name or description.
func (c *Client) EditAccessKey(ctx context.Context, accessKey string, req AccessKeyEditRequest) error {
	return c.noAnswer(ctx, http.MethodPatch, itemPath(PathAccessKeys, accessKey), req)
}
