package admin

// tablesRoutes are the Tables (warehouse) management calls.
var tablesRoutes = []route{}
