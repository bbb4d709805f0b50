package tablecmd

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// nsArgs builds the catalog client of ALIAS WAREHOUSE and parses NAMESPACE
// (args[0], args[1], args[2]).
func nsArgs(opts *cmdutil.Options, args []string) (*adminclient.CatalogClient, []string, error) {
	levels, err := parseNamespace(args[2])
	if err != nil {
		return nil, nil, err
	}
	c, err := opts.CatalogClient(args[0], args[1])
	return c, levels, err
}

// identArgs is nsArgs plus the table or view name in args[3].
func identArgs(opts *cmdutil.Options, args []string) (*adminclient.CatalogClient, adminclient.CatalogIdent, error) {
	c, levels, err := nsArgs(opts, args)
	return c, adminclient.CatalogIdent{Namespace: levels, Name: args[3]}, err
}

func fmtIdent(id adminclient.CatalogIdent) string {
	return strings.Join(append(append([]string{}, id.Namespace...), id.Name), ".")
}

func newTableCreateCmd(opts *cmdutil.Options) *cobra.Command {
	var schema, partition, location string
	var props []string
	cmd := &cobra.Command{
		Use:   "create ALIAS WAREHOUSE NAMESPACE TABLE",
		Short: "Create an Iceberg table",
		Example: `  twinlake table create site1 lake sales orders --schema 'id:long!,name:string,ts:timestamptz'
  twinlake table create site1 lake sales orders --schema schema.json --partition 'day(ts),bucket(16,id)' --property write.format.default=parquet`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			sc, fields, err := parseSchema(schema)
			if err != nil {
				return err
			}
			p, err := parseProps(props)
			if err != nil {
				return err
			}
			req := adminclient.CatalogCreateTable{Name: id.Name, Location: location, Schema: sc, Properties: p}
			if partition != "" {
				if req.PartitionSpec, err = parsePartition(partition, fields); err != nil {
					return err
				}
			}
			res, err := c.CreateTable(cmd.Context(), id.Namespace, req)
			if err != nil {
				return fmt.Errorf("create table %s: %w", fmtIdent(id), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, fmt.Sprintf("Table `%s` created at %s.", fmtIdent(id), res.MetadataLocation))
		},
	}
	cmd.Flags().StringVar(&schema, "schema", "", "columns 'name:type,...' ('!' marks required), or a schema JSON file")
	cmd.Flags().StringVar(&partition, "partition", "", "partition fields: col, day(ts), bucket(16,id), truncate(10,name), ...")
	cmd.Flags().StringVar(&location, "location", "", "table location (default s3://WAREHOUSE/NAMESPACE.../TABLE)")
	cmd.Flags().StringArrayVar(&props, "property", nil, "table property key=value (repeatable)")
	_ = cmd.MarkFlagRequired("schema")
	return cmd
}

func newTableListCmd(opts *cmdutil.Options) *cobra.Command {
	var deleted bool
	cmd := &cobra.Command{
		Use: "list ALIAS WAREHOUSE NAMESPACE", Short: "List the tables of a namespace (--deleted: the soft-deleted ones)",
		Example: "  twinlake table list site1 lake sales\n  twinlake table list --deleted site1 lake sales", Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if deleted {
				return listDeleted(cmd, opts, adminclient.KindTable, args)
			}
			c, levels, err := nsArgs(opts, args)
			if err != nil {
				return err
			}
			ids, err := c.ListTables(cmd.Context(), levels, 0)
			if err != nil {
				return fmt.Errorf("list tables of %s: %w", args[2], err)
			}
			lines := make([]string, len(ids))
			for i, id := range ids {
				lines[i] = fmtIdent(id)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"tables": ids}, strings.Join(lines, "\n"))
		},
	}
	cmd.Flags().BoolVar(&deleted, "deleted", false, "list soft-deleted tables with drop time and expiry")
	return cmd
}

// tableSummary is what table show prints from the metadata.
type tableSummary struct {
	UUID              string            `json:"table-uuid"`
	Location          string            `json:"location"`
	FormatVersion     int               `json:"format-version"`
	CurrentSnapshotID *int64            `json:"current-snapshot-id"`
	Properties        map[string]string `json:"properties"`
	Snapshots         []json.RawMessage `json:"snapshots"`
	CurrentSchemaID   int               `json:"current-schema-id"`
	Schemas           []struct {
		ID     int           `json:"schema-id"`
		Fields []schemaField `json:"fields"`
	} `json:"schemas"`
}

func newTableShowCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use: "show ALIAS WAREHOUSE NAMESPACE TABLE", Short: "Show a table: location, schema, snapshots, properties",
		Example: "  twinlake table show site1 lake sales orders\n  twinlake table show --json site1 lake sales orders",
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			res, err := c.LoadTable(cmd.Context(), id)
			if err != nil {
				return fmt.Errorf("table %s: %w", fmtIdent(id), err)
			}
			var s tableSummary
			if err := json.Unmarshal(res.Metadata, &s); err != nil {
				return fmt.Errorf("table %s: metadata: %w", fmtIdent(id), err)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Table:     %s\nUUID:      %s\nLocation:  %s\nMetadata:  %s\nFormat:    v%d\nSnapshots: %d",
				fmtIdent(id), s.UUID, s.Location, res.MetadataLocation, s.FormatVersion, len(s.Snapshots))
			for _, sc := range s.Schemas {
				if sc.ID != s.CurrentSchemaID {
					continue
				}
				b.WriteString("\nSchema:")
				for _, f := range sc.Fields {
					fmt.Fprintf(&b, "\n  %d %s %s", f.ID, f.Name, f.Type)
				}
			}
			if len(s.Properties) > 0 {
				b.WriteString("\nProperties:" + fmtProps(s.Properties))
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, res, b.String())
		},
	}
}

func newTableRenameCmd(opts *cmdutil.Options) *cobra.Command {
	var toNS string
	cmd := &cobra.Command{
		Use: "rename ALIAS WAREHOUSE NAMESPACE TABLE NEW_NAME", Short: "Rename a table (optionally into another namespace)",
		Example: "  twinlake table rename site1 lake sales orders orders_v1\n  twinlake table rename site1 lake sales orders orders --to-namespace archive",
		Args:    cobra.ExactArgs(5),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, from, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			to := adminclient.CatalogIdent{Namespace: from.Namespace, Name: args[4]}
			if toNS != "" {
				if to.Namespace, err = parseNamespace(toNS); err != nil {
					return err
				}
			}
			if err := c.RenameTable(cmd.Context(), from, to); err != nil {
				return fmt.Errorf("rename table %s: %w", fmtIdent(from), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "from": from, "to": to},
				fmt.Sprintf("Table `%s` renamed to `%s`.", fmtIdent(from), fmtIdent(to)))
		},
	}
	cmd.Flags().StringVar(&toNS, "to-namespace", "", "move the table into this namespace")
	return cmd
}

func newTableRemoveCmd(opts *cmdutil.Options) *cobra.Command {
	var purge, yes bool
	cmd := &cobra.Command{
		Use: "remove ALIAS WAREHOUSE NAMESPACE TABLE", Short: "Drop a table (--purge also deletes its files)",
		Example: "  twinlake table remove --yes site1 lake sales orders\n  twinlake table remove --purge --yes site1 lake sales orders",
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := identArgs(opts, args)
			if err != nil {
				return err
			}
			what := "Drop"
			if purge {
				what = "Drop and purge"
			}
			if err := cmdutil.Confirm(cmd, yes, fmt.Sprintf("%s table %s in %s/%s?", what, fmtIdent(id), args[0], args[1])); err != nil {
				return err
			}
			if err := c.DropTable(cmd.Context(), id, purge); err != nil {
				return fmt.Errorf("remove table %s: %w", fmtIdent(id), err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "table": id, "purged": purge},
				fmt.Sprintf("Table `%s` removed.", fmtIdent(id)))
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also delete the table's data and metadata files")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not prompt")
	return cmd
}
