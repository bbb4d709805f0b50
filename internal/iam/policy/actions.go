package policy

import "strings"

// Actions of the S3 surface that policies may name. The S3 edge maps each
// operation to one of these (internal/s3api); the list also holds actions
// twinlake does not serve yet, so that policies written for AWS or MinIO
// parse.
var S3Actions = []string{
	"s3:AbortMultipartUpload", "s3:BypassGovernanceRetention", "s3:CreateBucket",
	"s3:DeleteBucket", "s3:DeleteBucketPolicy", "s3:DeleteObject", "s3:DeleteObjectTagging",
	"s3:DeleteObjectVersion", "s3:DeleteObjectVersionTagging",
	"s3:ForceDeleteBucket", "s3:GetBucketAcl", "s3:GetBucketCORS", "s3:GetBucketLocation",
	"s3:GetBucketNotification", "s3:GetBucketObjectLockConfiguration", "s3:GetBucketPolicy",
	"s3:GetBucketPolicyStatus", "s3:GetBucketTagging", "s3:GetBucketVersioning",
	"s3:GetEncryptionConfiguration", "s3:GetLifecycleConfiguration", "s3:GetObject",
	"s3:GetObjectAcl", "s3:GetObjectAttributes", "s3:GetObjectLegalHold", "s3:GetObjectRetention",
	"s3:GetObjectTagging", "s3:GetObjectVersion", "s3:GetObjectVersionAttributes",
	"s3:GetObjectVersionForReplication", "s3:GetObjectVersionTagging",
	"s3:GetReplicationConfiguration", "s3:ListAllMyBuckets", "s3:ListBucket",
	"s3:ListBucketMultipartUploads", "s3:ListBucketVersions", "s3:ListMultipartUploadParts",
	"s3:ListenBucketNotification", "s3:PutBucketAcl", "s3:PutBucketCORS",
	"s3:PutBucketNotification", "s3:PutBucketObjectLockConfiguration", "s3:PutBucketPolicy",
	"s3:PutBucketTagging", "s3:PutBucketVersioning", "s3:PutEncryptionConfiguration",
	"s3:PutLifecycleConfiguration", "s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectLegalHold",
	"s3:PutObjectRetention", "s3:PutObjectTagging", "s3:PutObjectVersionTagging",
	"s3:PutReplicationConfiguration", "s3:ReplicateDelete", "s3:ReplicateObject",
	"s3:ReplicateTags", "s3:RestoreObject",
	"s3:GetBucketWebsite", "s3:GetBucketPublicAccessBlock", "s3:GetBucketOwnershipControls", "s3:GetAccelerateConfiguration",
	"s3:GetBucketRequestPayment", "s3:GetBucketLogging",
}

// AdminActions are the admin API's actions (internal/admin maps each call to
// one). The names follow MinIO's where a MinIO call does the same thing.
var AdminActions = []string{
	"admin:ServerInfo", "admin:ConfigUpdate", "admin:ServerTrace", "admin:Prometheus",
	"admin:ConsoleLog", "admin:Profiling", "admin:OBDInfo", "admin:TopLocksInfo",
	"admin:BandwidthMonitor", "admin:DataUsageInfo", "admin:StorageInfo",
	"admin:SiteReplicationAdd", "admin:SiteReplicationRemove", "admin:SiteReplicationInfo",
	"admin:SiteReplicationResync", "admin:SiteReplicationOperation",
	"admin:TablesWarehouseAdmin", "admin:TablesReplicationInfo", "admin:TablesReplicationOperation",
	"admin:CreateUser", "admin:DeleteUser", "admin:ListUsers", "admin:GetUser",
	"admin:EnableUser", "admin:DisableUser",
	"admin:AddUserToGroup", "admin:RemoveUserFromGroup", "admin:GetGroup", "admin:ListGroups",
	"admin:EnableGroup", "admin:DisableGroup",
	"admin:CreatePolicy", "admin:DeletePolicy", "admin:GetPolicy", "admin:ListUserPolicies",
	"admin:AttachUserOrGroupPolicy",
	"admin:CreateServiceAccount", "admin:UpdateServiceAccount", "admin:RemoveServiceAccount",
	"admin:ListServiceAccounts",
	"admin:Heal", "admin:GetBucketQuota", "admin:SetBucketQuota",
}

// TablesActions are the Iceberg REST catalog's actions, with AIStor's names.
// The warehouse-level actions have two spellings each, AIStor's Warehouse
// and AWS S3 Tables' TableBucket (TablesAliases).
var TablesActions = []string{
	"s3tables:CreateTableBucket", "s3tables:CreateWarehouse", "s3tables:DeleteTableBucket",
	"s3tables:DeleteWarehouse", "s3tables:GetTableBucket", "s3tables:GetWarehouse",
	"s3tables:ListTableBuckets", "s3tables:ListWarehouses",
	"s3tables:GetConfig",
	"s3tables:CreateNamespace", "s3tables:DeleteNamespace", "s3tables:GetNamespace",
	"s3tables:ListNamespaces", "s3tables:UpdateNamespaceProperties",
	"s3tables:CreateTable", "s3tables:DeleteTable", "s3tables:GetTable", "s3tables:ListTables",
	"s3tables:RenameTable", "s3tables:UpdateTable", "s3tables:GetTableMetadataLocation",
	"s3tables:UpdateTableMetadataLocation", "s3tables:GetTableData", "s3tables:PutTableData",
	"s3tables:RegisterTable",
	"s3tables:CreateView", "s3tables:DeleteView", "s3tables:GetView", "s3tables:ListViews",
	"s3tables:RenameView", "s3tables:UpdateView",
}

// TablesAliases pairs the two spellings of each warehouse-level action:
// a statement naming either one (or matching either one with wildcards)
// covers both, whichever a request is authorized with.
var TablesAliases = [][2]string{
	{"s3tables:CreateWarehouse", "s3tables:CreateTableBucket"},
	{"s3tables:DeleteWarehouse", "s3tables:DeleteTableBucket"},
	{"s3tables:GetWarehouse", "s3tables:GetTableBucket"},
	{"s3tables:ListWarehouses", "s3tables:ListTableBuckets"},
}

// withAliases returns the action patterns of a statement with, for every
// alias pair of which the patterns match one spelling but not the other,
// the other spelling added, so that matching stays one pass over the
// patterns at request time.
func withAliases(patterns []string) []string {
	out := patterns
	matches := func(action string) bool {
		for _, p := range patterns {
			if p == "*" || wildcardMatchFold(p, action) {
				return true
			}
		}
		return false
	}
	for _, pair := range TablesAliases {
		a, b := matches(pair[0]), matches(pair[1])
		switch {
		case a && !b:
			out = append(out[:len(out):len(out)], pair[1])
		case b && !a:
			out = append(out[:len(out):len(out)], pair[0])
		}
	}
	return out
}

// STSActions are the security token service's actions.
var STSActions = []string{"sts:AssumeRole"}

// knownActions indexes every action by its service prefix ("s3", ...).
var knownActions = func() map[string][]string {
	m := map[string][]string{}
	for _, list := range [][]string{S3Actions, AdminActions, TablesActions, STSActions} {
		for _, a := range list {
			svc, _, _ := strings.Cut(a, ":")
			m[svc] = append(m[svc], a)
		}
	}
	return m
}()

// validAction reports whether an Action element names, or with wildcards
// matches, at least one known action. "*" is always valid.
func validAction(pattern string) bool {
	if pattern == "*" {
		return true
	}
	svc, name, ok := strings.Cut(pattern, ":")
	if !ok || name == "" {
		return false
	}
	for _, a := range knownActions[strings.ToLower(svc)] {
		if wildcardMatchFold(pattern, a) {
			return true
		}
	}
	return false
}
