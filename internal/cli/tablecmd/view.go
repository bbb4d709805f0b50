package tablecmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newTableViewCmd(opts *cmdutil.Options) *cobra.Command {
	v := &cobra.Command{Use: "view", Short: "Create, list, show and drop views"}
	var schema, sql, dialect string
	var yes bool
	create := &cobra.Command{
		Use: "create ALIAS WAREHOUSE NAMESPACE VIEW", Short: "Create a SQL view",
		Example: `  twinlake table view create site1 lake sales recent --schema 'id:long' --sql 'SELECT id FROM orders'`,
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			sc, _, err := parseSchema(schema)
			if err != nil {
				return err
			}
			version, err := json.Marshal(map[string]any{
				"version-id": 1, "schema-id": 0, "timestamp-ms": time.Now().UnixMilli(),
				"summary":           map[string]string{"engine-name": "twinlake-cli"},
				"representations":   []map[string]string{{"type": "sql", "sql": sql, "dialect": dialect}},
				"default-namespace": id.Namespace,
			})
			if err != nil {
				return err
			}
			res, err := c.CreateView(cmd.Context(), id.Namespace, adminclient.CatalogCreateView{
				Name: id.Name, Schema: sc, ViewVersion: version, Properties: map[string]string{},
			})
			if err != nil {
				return fmt.Errorf("create view %s: %w", fmtIdent(id), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, fmt.Sprintf("View `%s` created.", fmtIdent(id)))
		},
	}
	create.Flags().StringVar(&schema, "schema", "", "columns the view returns 'name:type,...', or a schema JSON file")
	create.Flags().StringVar(&sql, "sql", "", "the view's SELECT statement")
	create.Flags().StringVar(&dialect, "dialect", "spark", "SQL dialect of --sql")
	_ = create.MarkFlagRequired("schema")
	_ = create.MarkFlagRequired("sql")
	var deletedViews bool
	list := &cobra.Command{
		Use: "list ALIAS WAREHOUSE NAMESPACE", Short: "List the views of a namespace",
		Example: "  twinlake table view list site1 lake sales\n  twinlake table view list --deleted site1 lake sales", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deletedViews {
				return listDeleted(cmd, opts, adminclient.KindView, args)
			}
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			ids, err := c.ListViews(cmd.Context(), levels)
			if err != nil {
				return fmt.Errorf("list views of %s: %w", args[2], err)
			}
			lines := make([]string, len(ids))
			for i, id := range ids {
				lines[i] = fmtIdent(id)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"views": ids}, strings.Join(lines, "\n"))
		},
	}
	show := &cobra.Command{
		Use: "show ALIAS WAREHOUSE NAMESPACE VIEW", Short: "Show a view's current definition",
		Example: "  twinlake table view show site1 lake sales recent", Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			res, err := c.LoadView(cmd.Context(), id)
			if err != nil {
				return fmt.Errorf("view %s: %w", fmtIdent(id), err)
			}
			var md struct {
				UUID     string `json:"view-uuid"`
				Location string `json:"location"`
				Current  int64  `json:"current-version-id"`
				Versions []struct {
					ID   int64 `json:"version-id"`
					Reps []struct {
						SQL     string `json:"sql"`
						Dialect string `json:"dialect"`
					} `json:"representations"`
				} `json:"versions"`
			}
			if err := json.Unmarshal(res.Metadata, &md); err != nil {
				return fmt.Errorf("view %s: metadata: %w", fmtIdent(id), err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "View:      %s\nUUID:      %s\nLocation:  %s\nMetadata:  %s\nVersion:   %d",
				fmtIdent(id), md.UUID, md.Location, res.MetadataLocation, md.Current)
			for _, ver := range md.Versions {
				if ver.ID == md.Current {
					for _, r := range ver.Reps {
						fmt.Fprintf(&b, "\nSQL (%s): %s", r.Dialect, r.SQL)
					}
				}
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, b.String())
		},
	}
	drop := &cobra.Command{
		Use: "drop ALIAS WAREHOUSE NAMESPACE VIEW", Short: "Drop a view",
		Example: "  twinlake table view drop --yes site1 lake sales recent", Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			if err := cmdutil.Confirm(cmd, yes, fmt.Sprintf("Drop view %s in %s/%s?", fmtIdent(id), args[0], args[1])); err != nil {
				return err
			}
			if err := c.DropView(cmd.Context(), id); err != nil {
				return fmt.Errorf("drop view %s: %w", fmtIdent(id), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "view": id},
				fmt.Sprintf("View `%s` dropped.", fmtIdent(id)))
		},
	}
	drop.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	list.Flags().BoolVar(&deletedViews, "deleted", false, "list soft-deleted views with drop time and expiry")
	v.AddCommand(create, list, show, drop, newUndropCmd(opts, adminclient.KindView))
	return v
}
