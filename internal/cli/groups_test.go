package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestGroupsRefuseUnknownSubcommands: every command group (admin, table,
// table namespace, ...) refuses a subcommand it does not have, naming the
// near ones, where cobra alone printed the group's help and exited 0, so
// a mistyped command in a script looked like success; called alone, a
// group still shows its help.
func TestGroupsRefuseUnknownSubcommands(t *testing.T) {
	e := newCLIEnv(t)
	var groups []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && c.HasParent() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot())
	if len(groups) < 15 {
		t.Fatalf("found %d command groups, want the whole tree", len(groups))
	}
	for _, g := range groups {
		path := strings.Fields(g.CommandPath())[1:]
		_, err := e.run(append(path, "no-such-verb")...)
		if err == nil || !strings.Contains(err.Error(), `unknown command "no-such-verb" for "`+g.CommandPath()+`"`) {
			t.Errorf("%s no-such-verb: %v, want an unknown-command error", g.CommandPath(), err)
		}
		if out, err := e.run(path...); err != nil || !strings.Contains(out, "Available Commands:") {
			t.Errorf("%s alone: %v, want its help:\n%s", g.CommandPath(), err, out)
		}
	}
	_, err := e.run("table", "lst")
	if err == nil || !strings.Contains(err.Error(), "did you mean list?") {
		t.Fatalf("table lst: %v, want a suggestion of list", err)
	}
}

// TestListAndRemoveAnswerToBothSpellings: below the root, a subcommand
// named ls also answers to list, list to ls, rm to remove and remove to
// rm, as mc's do; the root's ls and rm stay the object verbs.
func TestListAndRemoveAnswerToBothSpellings(t *testing.T) {
	root := NewRoot()
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if other, ok := verbPairs[sub.Name()]; ok && c.HasParent() {
				args := append(strings.Fields(c.CommandPath())[1:], other)
				found, _, err := root.Find(args)
				if err != nil || found != sub {
					t.Errorf("%s %s finds %v (%v), want %s", c.CommandPath(), other, found.CommandPath(), err, sub.CommandPath())
				}
				checked++
			}
			walk(sub)
		}
	}
	walk(root)
	if checked < 20 {
		t.Fatalf("checked %d subcommands, want every ls, list, rm and remove", checked)
	}
	if found, _, _ := root.Find([]string{"list"}); found != root {
		t.Fatalf("twinlake list resolves to %s, want no command", found.CommandPath())
	}
}
