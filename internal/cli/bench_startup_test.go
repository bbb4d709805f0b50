package cli

import (
	"testing"
)

func TestBenchStartupFlags(t *testing.T) {
	root := NewRoot()
	root.SetArgs([]string{"bench", "startup", "--objects", "20,10"})
	if err := root.Execute(); err == nil {
		t.Fatal("descending --objects accepted")
	}
}
