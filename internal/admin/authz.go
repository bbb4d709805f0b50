package admin

import (
	"net/http"
	"strings"
)

// ActionAuthorizer is an optional capability of an Authenticator: deciding
// each admin call by its action (the admin: names of package policy) rather
// than all-or-nothing with IsAdmin. internal/app implements it over IAM.
type ActionAuthorizer interface {
	// AllowAdmin reports whether accessKey may perform action.
	AllowAdmin(accessKey, action string) bool
}

// ResourceAuthorizer is an optional capability of an Authenticator:
// deciding an action on one resource. The warehouse calls use it for
// their s3tables: actions (warehouseActions).
type ResourceAuthorizer interface {
	// AllowAdminOn reports whether accessKey may perform action on
	// resource (an ARN).
	AllowAdminOn(accessKey, action, resource string) bool
}

// warehouseActions are the s3tables: actions that allow the warehouse
// calls too, on arn:aws:s3tables:::bucket/NAME (bucket/* for the
// listing), as on AIStor: a policy granting s3tables:CreateWarehouse (or
// its alias s3tables:CreateTableBucket) on a warehouse may create it
// without admin:TablesWarehouseAdmin.
var warehouseActions = map[string]string{
	"admin.ListWarehouses":  "s3tables:ListWarehouses",
	"admin.GetWarehouse":    "s3tables:GetWarehouse",
	"admin.CreateWarehouse": "s3tables:CreateWarehouse",
	"admin.RemoveWarehouse": "s3tables:DeleteWarehouse",
}

// warehouseResource is the ARN a warehouse call's s3tables: action is
// decided on.
func warehouseResource(r *http.Request) string {
	name := r.PathValue("name")
	if name == "" {
		name = "*"
	}
	return "arn:aws:s3tables:::bucket/" + name
}

// routeActions maps each admin call (its trace funcname) to the IAM action
// a caller's policies must allow. A call missing from the table needs
// admin:* (every admin action), so a new route is closed until listed.
var routeActions = map[string]string{
	"admin.ServerInfo":     "admin:ServerInfo",
	"admin.GetConfig":      "admin:ConfigUpdate",
	"admin.SetConfig":      "admin:ConfigUpdate",
	"admin.Trace":          "admin:ServerTrace",
	"admin.Heal":           "admin:Heal",
	"admin.GetBucketQuota": "admin:GetBucketQuota",
	"admin.SetBucketQuota": "admin:SetBucketQuota",
	"admin.Profile":        "admin:Profiling",

	"admin.SiteReplicationAdd":          "admin:SiteReplicationAdd",
	"admin.SiteReplicationRemove":       "admin:SiteReplicationRemove",
	"admin.SiteReplicationInfo":         "admin:SiteReplicationInfo",
	"admin.SiteReplicationStatus":       "admin:SiteReplicationInfo",
	"admin.SiteReplicationResyncStart":  "admin:SiteReplicationResync",
	"admin.SiteReplicationResyncStatus": "admin:SiteReplicationInfo",
	"admin.SiteReplicationResyncCancel": "admin:SiteReplicationResync",
	"admin.BucketReplicationStatus":     "admin:SiteReplicationInfo",
	"admin.BucketReplicationBacklog":    "admin:SiteReplicationInfo",
	"admin.SiteReplicationHistory":      "admin:SiteReplicationInfo",

	"admin.ListWarehouses":         "admin:TablesWarehouseAdmin",
	"admin.GetWarehouse":           "admin:TablesWarehouseAdmin",
	"admin.CreateWarehouse":        "admin:TablesWarehouseAdmin",
	"admin.RemoveWarehouse":        "admin:TablesWarehouseAdmin",
	"admin.SetWarehouseEncryption": "admin:TablesWarehouseAdmin",
	"admin.SetWarehouseSettings":   "admin:TablesWarehouseAdmin",
	"admin.ListDeletedTables":      "admin:TablesWarehouseAdmin",
	"admin.UndropTable":            "admin:TablesWarehouseAdmin",
	"admin.MaintainTable":          "admin:TablesWarehouseAdmin",

	"admin.TablesReplicationStatus": "admin:TablesReplicationInfo",
	"admin.TablesBackfillStatus":    "admin:TablesReplicationInfo",
	"admin.TablesFailover":          "admin:TablesReplicationOperation",
	"admin.TablesBackfillStart":     "admin:TablesReplicationOperation",
	"admin.TablesBackfillCancel":    "admin:TablesReplicationOperation",
	"admin.TablesResyncOpen":        "admin:TablesReplicationOperation",
	"admin.TablesResyncRebuild":     "admin:TablesReplicationOperation",
	"admin.TablesCatalogReset":      "admin:TablesReplicationOperation",

	"admin.AddUser":            "admin:CreateUser",
	"admin.RemoveUser":         "admin:DeleteUser",
	"admin.ListUsers":          "admin:ListUsers",
	"admin.UserInfo":           "admin:GetUser",
	"admin.SetUserStatus":      "admin:EnableUser",
	"admin.AddGroupMembers":    "admin:AddUserToGroup",
	"admin.RemoveGroupMembers": "admin:RemoveUserFromGroup",
	"admin.RemoveGroup":        "admin:RemoveUserFromGroup",
	"admin.ListGroups":         "admin:ListGroups",
	"admin.GroupInfo":          "admin:GetGroup",
	"admin.SetGroupStatus":     "admin:EnableGroup",
	"admin.CreatePolicy":       "admin:CreatePolicy",
	"admin.RemovePolicy":       "admin:DeletePolicy",
	"admin.ListPolicies":       "admin:GetPolicy",
	"admin.PolicyInfo":         "admin:GetPolicy",
	"admin.AttachPolicy":       "admin:AttachUserOrGroupPolicy",
	"admin.DetachPolicy":       "admin:AttachUserOrGroupPolicy",
	"admin.PolicyEntities":     "admin:ListUserPolicies",
	"admin.CreateAccessKey":    "admin:CreateServiceAccount",
	"admin.RemoveAccessKey":    "admin:RemoveServiceAccount",
	"admin.ListAccessKeys":     "admin:ListServiceAccounts",
	"admin.AccessKeyInfo":      "admin:ListServiceAccounts",
	"admin.SetAccessKeyStatus": "admin:UpdateServiceAccount",
	"admin.EditAccessKey":      "admin:UpdateServiceAccount",

	"admin.NotFound": "admin:ServerInfo",
}

// routeAction returns the action of a call.
func routeAction(name string) string {
	if a, ok := routeActions[name]; ok {
		return a
	}
	return "admin:*"
}

// actionForStatus refines the status calls: disabling needs the Disable
// action, as in MinIO.
func actionForStatus(action string, enabled bool) string {
	if enabled {
		return action
	}
	return strings.Replace(action, ":Enable", ":Disable", 1)
}
