package objcmd

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newTreeCmd(opts *cmdutil.Options) *cobra.Command {
	var (
		files  bool
		depth  int
		rewind string
	)
	cmd := &cobra.Command{
		Use:   "tree ALIAS/BUCKET[/PREFIX]",
		Short: "Show the folders under a bucket or prefix as a tree",
		Long: `Draw the folders (key prefixes up to a '/') under a bucket or prefix as a
tree; --files adds the objects, --depth stops N levels down. With --json each
folder or object is one line with its depth. --rewind draws the tree as it was
at a time.`,
		Example: `  twinlake tree site1/photos
  twinlake tree --files --depth 2 site1/photos/2024
  twinlake tree --files --rewind 7d site1/photos`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			if _, err := cmdutil.RequireBucket(args[0]); err != nil {
				return err
			}
			if depth < 0 {
				return fmt.Errorf("--depth %d: want 0 (no limit) or more", depth)
			}
			at, err := rewindFlag(rewind)
			if err != nil {
				return err
			}
			root, err := openWalkRoot(opts, args[0])
			if err != nil {
				return err
			}
			top := &treeNode{children: map[string]*treeNode{}}
			err = root.walkAt(cmd.Context(), at, func(e walkEntry) error {
				top.add(strings.Split(e.Rel, "/"), e.Size, files, depth)
				return nil
			})
			if err != nil {
				return err
			}
			name := root.String()
			if !opts.JSON {
				fmt.Fprintln(cmd.OutOrStdout(), name)
			}
			return top.print(cmd, opts, strings.TrimSuffix(name, "/")+"/", "", 1)
		}),
	}
	cmd.Flags().BoolVarP(&files, "files", "f", false, "show objects as well as folders")
	cmd.Flags().IntVarP(&depth, "depth", "d", 0, "stop this many levels down (0: no limit)")
	cmd.Flags().StringVar(&rewind, "rewind", "", rewindHelp)
	return cmd
}

// treeNode is a folder (with children) or an object.
type treeNode struct {
	children map[string]*treeNode
	file     bool
	size     int64
}

// add files an object's path parts under n, folders only unless files,
// no deeper than depth (0: unlimited).
func (n *treeNode) add(parts []string, size int64, files bool, depth int) {
	for i, p := range parts {
		last := i == len(parts)-1
		if (last && !files) || (depth > 0 && i >= depth) {
			return
		}
		name := p
		if !last {
			name += "/"
		}
		c := n.children[name]
		if c == nil {
			c = &treeNode{children: map[string]*treeNode{}, file: last, size: size}
			n.children[name] = c
		}
		n = c
	}
}

// treeEntry is one node as printed with --json.
type treeEntry struct {
	Status string `json:"status"`
	Key    string `json:"key"`
	Type   string `json:"type"` // "folder" or "file"
	Size   int64  `json:"size,omitempty"`
	Depth  int    `json:"depth"`
}

func (n *treeNode) print(cmd *cobra.Command, opts *cmdutil.Options, path, indent string, depth int) error {
	names := slices.Sorted(maps.Keys(n.children))
	for i, name := range names {
		c := n.children[name]
		branch, next := "├─ ", "│  "
		if i == len(names)-1 {
			branch, next = "└─ ", "   "
		}
		e := treeEntry{Status: "success", Key: path + name, Type: "folder", Depth: depth}
		if c.file {
			e.Type, e.Size = "file", c.size
		}
		if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, e, indent+branch+strings.TrimSuffix(name, "/")); err != nil {
			return err
		}
		if err := c.print(cmd, opts, path+name, indent+next, depth+1); err != nil {
			return err
		}
	}
	return nil
}
