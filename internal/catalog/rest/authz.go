package rest

import (
	"net/http"
	"strings"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// Authorizer is an optional capability of an Authenticator: deciding each
// call by its s3tables action and resource. internal/app implements it over
// IAM; without it every authenticated caller may make every call.
type Authorizer interface {
	// Authorize reports whether accessKey may perform r (no bucket policy
	// applies to the catalog).
	Authorize(accessKey string, bucket *policy.Policy, r *policy.Request) bool
}

// routeActions maps each call to its s3tables action (AIStor's names).
var routeActions = map[string]string{
	"tables.GetConfig":                 "s3tables:GetConfig",
	"tables.ListNamespaces":            "s3tables:ListNamespaces",
	"tables.CreateNamespace":           "s3tables:CreateNamespace",
	"tables.LoadNamespace":             "s3tables:GetNamespace",
	"tables.NamespaceExists":           "s3tables:GetNamespace",
	"tables.DropNamespace":             "s3tables:DeleteNamespace",
	"tables.UpdateNamespaceProperties": "s3tables:UpdateNamespaceProperties",
	"tables.ListTables":                "s3tables:ListTables",
	"tables.CreateTable":               "s3tables:CreateTable",
	"tables.LoadTable":                 "s3tables:GetTable",
	"tables.TableExists":               "s3tables:GetTable",
	"tables.LoadCredentials":           "s3tables:GetTable",
	"tables.SignRequest":               "s3tables:GetTable", // a write also needs UpdateTable (sign.go)
	"tables.CommitTable":               "s3tables:UpdateTable",
	"tables.DropTable":                 "s3tables:DeleteTable",
	"tables.ReportMetrics":             "s3tables:GetTable",
	"tables.RegisterTable":             "s3tables:RegisterTable",
	"tables.RenameTable":               "s3tables:RenameTable",
	"tables.CommitTransaction":         "s3tables:UpdateTable",
	"tables.ListViews":                 "s3tables:ListViews",
	"tables.CreateView":                "s3tables:CreateView",
	"tables.LoadView":                  "s3tables:GetView",
	"tables.ViewExists":                "s3tables:GetView",
	"tables.ReplaceView":               "s3tables:UpdateView",
	"tables.DropView":                  "s3tables:DeleteView",
	"tables.RenameView":                "s3tables:RenameView",
}

// accessDenied is answered as 403 ForbiddenException with its own message.
type accessDenied struct{ msg string }

func (e accessDenied) Error() string        { return e.msg }
func (e accessDenied) Is(target error) bool { return target == ErrForbidden }

// authorize checks a routed call against the Authenticator's Authorizer.
// The resource is arn:aws:s3tables:::bucket/WAREHOUSE, narrowed to
// .../table/UUID or .../view/UUID when the call names an existing table or
// view; the condition keys s3tables:namespace, s3tables:tableName and
// s3tables:viewName carry the names.
func (s *Server) authorize(r *http.Request, rt *route, c *call, accessKey string) error {
	az, ok := s.cfg.Auth.(Authorizer)
	if !ok {
		return nil
	}
	action := routeActions[rt.name]
	if action == "" {
		action = "s3tables:*"
	}
	req := s.policyRequest(r, c, action)
	if !az.Authorize(accessKey, nil, req) {
		return accessDenied{msg: "Access Denied: " + accessKey + " may not perform " + action + " on " + req.Resource}
	}
	return nil
}

// policyRequest is the request to authorize action on what c addresses.
func (s *Server) policyRequest(r *http.Request, c *call, action string) *policy.Request {
	req := &policy.Request{Action: action, Resource: s.tablesResource(r, c), Values: map[string]string{}}
	if ns, ok := c.params["namespace"]; ok {
		req.Values["s3tables:namespace"] = strings.ReplaceAll(ns, "\x1f", ".")
	}
	if t, ok := c.params["table"]; ok {
		req.Values["s3tables:tablename"] = t
	}
	if v, ok := c.params["view"]; ok {
		req.Values["s3tables:viewname"] = v
	}
	return req
}

// tablesResource returns the ARN of the warehouse, table or view a call
// addresses (the config call names its warehouse in the query);
// arn:aws:s3tables:::bucket/* for calls outside any warehouse.
func (s *Server) tablesResource(r *http.Request, c *call) string {
	wh, ok := c.params["prefix"]
	if !ok {
		wh = r.URL.Query().Get("warehouse")
	}
	if wh == "" {
		return "arn:aws:s3tables:::bucket/*"
	}
	arn := "arn:aws:s3tables:::bucket/" + wh
	for _, kind := range []string{"table", "view"} {
		if _, named := c.params[kind]; !named {
			continue
		}
		if e, found, err := s.cfg.Catalog.Local(wh, kind, tableIdent(c, kind)); err == nil && found {
			return arn + "/" + kind + "/" + e.UUID
		}
	}
	return arn
}
