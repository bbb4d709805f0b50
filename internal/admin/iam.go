package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/iam/policy"
)

// IdentityAdmin manages the site's identities; *iam.Store implements it and
// its errors are iam's sentinels (and policy.ErrInvalidPolicy).
type IdentityAdmin interface {
	AddUser(ctx context.Context, name, secret string) error
	RemoveUser(ctx context.Context, name string) error
	SetUserEnabled(ctx context.Context, name string, enabled bool) error
	User(name string) (iam.UserInfo, error)
	Users() []iam.UserInfo
	AddGroupMembers(ctx context.Context, group string, members []string) error
	RemoveGroupMembers(ctx context.Context, group string, members []string) error
	SetGroupEnabled(ctx context.Context, group string, enabled bool) error
	Group(name string) (iam.GroupInfo, error)
	Groups() []iam.GroupInfo
	PutPolicy(ctx context.Context, name string, doc []byte) error
	RemovePolicy(ctx context.Context, name string) error
	Policy(name string) (iam.PolicyInfo, error)
	Policies() []iam.PolicyInfo
	Attach(ctx context.Context, e iam.Entity, names []string) error
	Detach(ctx context.Context, e iam.Entity, names []string) error
	Entities() []iam.PolicyEntities
	CreateAccessKey(ctx context.Context, parent string, o iam.AccessKeyOptions) (iam.Credential, error)
	RemoveAccessKey(ctx context.Context, accessKey string) error
	SetAccessKeyEnabled(ctx context.Context, accessKey string, enabled bool) error
	UpdateAccessKey(ctx context.Context, accessKey string, u iam.AccessKeyUpdate) error
	AccessKey(accessKey string) (iam.AccessKeyInfo, error)
	AccessKeys(parent string) []iam.AccessKeyInfo
}

var _ IdentityAdmin = (*iam.Store)(nil)

// iamRoutes are the identity and access calls.
var iamRoutes = []route{
	{http.MethodGet, adminclient.PathUsers, "admin.ListUsers", (*Server).listUsers},
	{http.MethodGet, adminclient.PathUsers + "/{name}", "admin.UserInfo", (*Server).userInfo},
	{http.MethodPut, adminclient.PathUsers + "/{name}", "admin.AddUser", (*Server).addUser},
	{http.MethodDelete, adminclient.PathUsers + "/{name}", "admin.RemoveUser", (*Server).removeUser},
	{http.MethodPut, adminclient.PathUsers + "/{name}" + adminclient.PathStatusSuffix, "admin.SetUserStatus", (*Server).setUserStatus},
	{http.MethodGet, adminclient.PathGroups, "admin.ListGroups", (*Server).listGroups},
	{http.MethodGet, adminclient.PathGroups + "/{name}", "admin.GroupInfo", (*Server).groupInfo},
	{http.MethodDelete, adminclient.PathGroups + "/{name}", "admin.RemoveGroup", (*Server).removeGroupMembers},
	{http.MethodPut, adminclient.PathGroups + "/{name}" + adminclient.PathMembersSuffix, "admin.AddGroupMembers", (*Server).addGroupMembers},
	{http.MethodDelete, adminclient.PathGroups + "/{name}" + adminclient.PathMembersSuffix, "admin.RemoveGroupMembers", (*Server).removeGroupMembers},
	{http.MethodPut, adminclient.PathGroups + "/{name}" + adminclient.PathStatusSuffix, "admin.SetGroupStatus", (*Server).setGroupStatus},
	{http.MethodGet, adminclient.PathPolicies, "admin.ListPolicies", (*Server).listPolicies},
	{http.MethodGet, adminclient.PathPolicies + "/{name}", "admin.PolicyInfo", (*Server).policyInfo},
	{http.MethodPut, adminclient.PathPolicies + "/{name}", "admin.CreatePolicy", (*Server).createPolicy},
	{http.MethodDelete, adminclient.PathPolicies + "/{name}", "admin.RemovePolicy", (*Server).removePolicy},
	{http.MethodPost, adminclient.PathPolicyAttach, "admin.AttachPolicy", (*Server).attachPolicy},
	{http.MethodPost, adminclient.PathPolicyDetach, "admin.DetachPolicy", (*Server).attachPolicy},
	{http.MethodGet, adminclient.PathPolicyEntities, "admin.PolicyEntities", (*Server).policyEntities},
	{http.MethodPost, adminclient.PathAccessKeys, "admin.CreateAccessKey", (*Server).createAccessKey},
	{http.MethodGet, adminclient.PathAccessKeys, "admin.ListAccessKeys", (*Server).listAccessKeys},
	{http.MethodGet, adminclient.PathAccessKeys + "/{name}", "admin.AccessKeyInfo", (*Server).accessKeyInfo},
	{http.MethodDelete, adminclient.PathAccessKeys + "/{name}", "admin.RemoveAccessKey", (*Server).removeAccessKey},
	{http.MethodPatch, adminclient.PathAccessKeys + "/{name}", "admin.EditAccessKey", (*Server).editAccessKey},
	{http.MethodPut, adminclient.PathAccessKeys + "/{name}" + adminclient.PathStatusSuffix, "admin.SetAccessKeyStatus", (*Server).setAccessKeyStatus},
}

// errIAMUnavailable is answered (501) when the server has no identity
// store (Config.Identities is nil).
var errIAMUnavailable = errors.New("this server has no identity management")

// iamErrorTable maps identity errors to admin codes; classify consults it
// after the core table.
var iamErrorTable = []errorEntry{
	{errIAMUnavailable, adminclient.CodeNotImplemented, http.StatusNotImplemented},
	{iam.ErrInvalidName, adminclient.CodeInvalidName, http.StatusBadRequest},
	{iam.ErrWeakSecret, adminclient.CodeInvalidSecretKey, http.StatusBadRequest},
	{policy.ErrInvalidPolicy, adminclient.CodeMalformedPolicy, http.StatusBadRequest},
	{iam.ErrInvalidExpiry, adminclient.CodeInvalidExpiry, http.StatusBadRequest},
	{iam.ErrUserExists, adminclient.CodeUserExists, http.StatusConflict},
	{iam.ErrAccessKeyExists, adminclient.CodeAccessKeyExists, http.StatusConflict},
	{iam.ErrNoSuchUser, adminclient.CodeNoSuchUser, http.StatusNotFound},
	{iam.ErrNoSuchGroup, adminclient.CodeNoSuchGroup, http.StatusNotFound},
	{iam.ErrNoSuchPolicy, adminclient.CodeNoSuchPolicy, http.StatusNotFound},
	{iam.ErrNoSuchAccessKey, adminclient.CodeNoSuchAccessKey, http.StatusNotFound},
	{iam.ErrGroupNotEmpty, adminclient.CodeGroupNotEmpty, http.StatusConflict},
	{iam.ErrPolicyAttached, adminclient.CodePolicyInUse, http.StatusConflict},
	{iam.ErrPolicyNotAttached, adminclient.CodePolicyNotAttached, http.StatusConflict},
	{iam.ErrBuiltinPolicy, adminclient.CodeBuiltinPolicy, http.StatusConflict},
}

// ids returns the identity store or errIAMUnavailable.
func (s *Server) ids() (IdentityAdmin, error) {
	if s.cfg.Identities == nil {
		return nil, errIAMUnavailable
	}
	return s.cfg.Identities, nil
}

// readJSON decodes a bounded JSON body into v.
func (s *Server) readJSON(r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return nil
}

// done answers a call that has nothing to report.
func done(w http.ResponseWriter, err error) error {
	if err == nil {
		writeJSON(w, http.StatusOK, struct{}{})
	}
	return err
}

// allow checks a further action within a call (disabling, say).
func (s *Server) allow(c *call, action string) error {
	if az, ok := s.cfg.Auth.(ActionAuthorizer); ok && !az.AllowAdmin(c.accessKey, action) {
		return fmt.Errorf("%w: %s may not perform %s", ErrAccessDenied, c.accessKey, action)
	}
	return nil
}

func wireUser(u iam.UserInfo) adminclient.User {
	return adminclient.User{Name: u.Name, Enabled: u.Enabled, Policies: nonNil(u.Policies), Groups: nonNil(u.Groups), Created: u.Created}
}

func wireGroup(g iam.GroupInfo) adminclient.Group {
	return adminclient.Group{Name: g.Name, Enabled: g.Enabled, Members: nonNil(g.Members), Policies: nonNil(g.Policies), Created: g.Created}
}

func wireAccessKey(k iam.AccessKeyInfo) adminclient.AccessKey {
	return adminclient.AccessKey{AccessKey: k.AccessKey, User: k.Parent, Name: k.Name, Description: k.Description,
		Enabled: k.Enabled, Expiry: k.Expiry, Policy: k.SessionPolicy, Created: k.Created}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	out := adminclient.UserList{Users: []adminclient.User{}}
	for _, u := range ids.Users() {
		out.Users = append(out.Users, wireUser(u))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) userInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	u, err := ids.User(r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireUser(u))
	return nil
}

func (s *Server) addUser(w http.ResponseWriter, r *http.Request, c *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.UserAddRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	c.msg = "user " + r.PathValue("name") // never the secret
	return done(w, ids.AddUser(r.Context(), r.PathValue("name"), req.SecretKey))
}

func (s *Server) removeUser(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	return done(w, ids.RemoveUser(r.Context(), r.PathValue("name")))
}

func (s *Server) setUserStatus(w http.ResponseWriter, r *http.Request, c *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.StatusRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	if err := s.allow(c, actionForStatus("admin:EnableUser", req.Enabled)); err != nil {
		return err
	}
	return done(w, ids.SetUserEnabled(r.Context(), r.PathValue("name"), req.Enabled))
}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	out := adminclient.GroupList{Groups: []adminclient.Group{}}
	for _, g := range ids.Groups() {
		out.Groups = append(out.Groups, wireGroup(g))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) groupInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	g, err := ids.Group(r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireGroup(g))
	return nil
}

func (s *Server) addGroupMembers(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.MembersRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	return done(w, ids.AddGroupMembers(r.Context(), r.PathValue("name"), req.Members))
}

func (s *Server) removeGroupMembers(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	return done(w, ids.RemoveGroupMembers(r.Context(), r.PathValue("name"), r.URL.Query()["member"]))
}

func (s *Server) setGroupStatus(w http.ResponseWriter, r *http.Request, c *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.StatusRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	if err := s.allow(c, actionForStatus("admin:EnableGroup", req.Enabled)); err != nil {
		return err
	}
	return done(w, ids.SetGroupEnabled(r.Context(), r.PathValue("name"), req.Enabled))
}

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	out := adminclient.PolicyList{Policies: []adminclient.Policy{}}
	for _, p := range ids.Policies() {
		out.Policies = append(out.Policies, adminclient.Policy{Name: p.Name, Builtin: p.Builtin, Document: p.Document})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) policyInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	p, err := ids.Policy(r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, adminclient.Policy{Name: p.Name, Builtin: p.Builtin, Document: p.Document})
	return nil
}

func (s *Server) createPolicy(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	doc, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return done(w, ids.PutPolicy(r.Context(), r.PathValue("name"), doc))
}

func (s *Server) removePolicy(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	return done(w, ids.RemovePolicy(r.Context(), r.PathValue("name")))
}

func (s *Server) attachPolicy(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.AttachRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	e := iam.Entity{User: req.User, Group: req.Group}
	if r.URL.Path == adminclient.PathPolicyDetach {
		return done(w, ids.Detach(r.Context(), e, req.Policies))
	}
	return done(w, ids.Attach(r.Context(), e, req.Policies))
}

func (s *Server) policyEntities(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	out := adminclient.PolicyEntitiesList{Policies: []adminclient.PolicyEntities{}}
	for _, e := range ids.Entities() {
		out.Policies = append(out.Policies, adminclient.PolicyEntities{Policy: e.Policy, Users: nonNil(e.Users), Groups: nonNil(e.Groups)})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) createAccessKey(w http.ResponseWriter, r *http.Request, c *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.AccessKeyCreateRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	parent := req.User
	if parent == "" {
		parent = c.accessKey
	}
	cred, err := ids.CreateAccessKey(r.Context(), parent, iam.AccessKeyOptions{
		AccessKey: req.AccessKey, SecretKey: req.SecretKey, SessionPolicy: req.Policy,
		Expiry: req.Expiry, Name: req.Name, Description: req.Description,
	})
	if err != nil {
		return err
	}
	c.msg = "access key " + cred.AccessKey + " for " + parent
	writeJSON(w, http.StatusOK, adminclient.AccessKeyCredentials{AccessKey: cred.AccessKey, SecretKey: cred.SecretKey, Expiry: req.Expiry})
	return nil
}

func (s *Server) listAccessKeys(w http.ResponseWriter, r *http.Request, c *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	user := r.URL.Query().Get("user")
	if user == "" && r.URL.Query().Get("all") != "true" {
		user = c.accessKey
	}
	out := adminclient.AccessKeyList{AccessKeys: []adminclient.AccessKey{}}
	for _, k := range ids.AccessKeys(user) {
		out.AccessKeys = append(out.AccessKeys, wireAccessKey(k))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) accessKeyInfo(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	k, err := ids.AccessKey(r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wireAccessKey(k))
	return nil
}

func (s *Server) removeAccessKey(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	return done(w, ids.RemoveAccessKey(r.Context(), r.PathValue("name")))
}

func (s *Server) setAccessKeyStatus(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.StatusRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	return done(w, ids.SetAccessKeyEnabled(r.Context(), r.PathValue("name"), req.Enabled))
}

func (s *Server) editAccessKey(w http.ResponseWriter, r *http.Request, _ *call) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	var req adminclient.AccessKeyEditRequest
	if err := s.readJSON(r, &req); err != nil {
		return err
	}
	u := iam.AccessKeyUpdate{SecretKey: req.SecretKey, Expiry: req.Expiry, Name: req.Name, Description: req.Description}
	if req.Policy != nil {
		doc := []byte(*req.Policy)
		if string(doc) == "null" || string(doc) == `""` {
			doc = nil
		}
		u.SessionPolicy = &doc
	}
	return done(w, ids.UpdateAccessKey(r.Context(), r.PathValue("name"), u))
}
