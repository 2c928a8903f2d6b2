package azstore

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTablesOnlyLinksNoQueueOrBlobModule: a program that uses azstore for
// tables links aztables and what it needs, and nothing of the queue and
// blob services: they live in azqueues and azblobs. The budget is the
// modules it links today; a new one is a decision to make on purpose.
func TestTablesOnlyLinksNoQueueOrBlobModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}", "github.com/tablekit/tablekit/store/azstore").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var mods []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	for _, m := range mods {
		for _, bad := range []string{"storage/azqueue", "storage/azblob", "arrow-go", "klauspost", "flatbuffers", "lz4", "xxh3"} {
			if strings.Contains(m, bad) {
				t.Errorf("store/azstore links %s: the queue and blob services belong in azqueues and azblobs", m)
			}
		}
	}
	allowed := []string{
		"github.com/tablekit/tablekit",
		"github.com/Azure/azure-sdk-for-go/sdk/azcore",
		"github.com/Azure/azure-sdk-for-go/sdk/data/aztables",
		"github.com/Azure/azure-sdk-for-go/sdk/internal",
		"golang.org/x/net",
		"golang.org/x/text",
	}
	for _, m := range mods {
		if !slices.Contains(allowed, m) {
			t.Errorf("store/azstore links %s, outside its budget of %d modules %v", m, len(allowed), allowed)
		}
	}
}
