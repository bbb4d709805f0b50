package cli

import "github.com/spf13/cobra"

// addAdminCommands attaches the admin command tree (info, config, trace).
func addAdminCommands(root *cobra.Command, opts *options) {}
