package admin

// replicationRoutes are the site replication calls.
var replicationRoutes = []route{}
