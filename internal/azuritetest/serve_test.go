package azuritetest

import (
	"bufio"
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store/azstore"
)

// TestMakeAzuriteServesUntilInterrupted runs what `make azurite` runs: it
// must print a connection string that works, keep Azurite up, and stop it
// on an interrupt (Ctrl-C), leaving nothing listening.
func TestMakeAzuriteServesUntilInterrupted(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "tools/azurite/node_modules/.bin/azurite")); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("Azurite is not installed in tools/azurite: make test installs it")
		}
		t.Skip("Azurite is not installed in tools/azurite; run make test (or make azurite-install)")
	}
	cmd := exec.Command(filepath.Join(root, "scripts/with-azurite.sh"), filepath.Join(root, "scripts/azurite-serve.sh"))
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}()

	lines := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var conn string
	deadline := time.After(90 * time.Second)
	for conn == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("make azurite ended without printing a connection string")
			}
			if v, found := strings.CutPrefix(strings.TrimSpace(l), "export TABLEKIT_AZURITE_CONN='"); found {
				conn = strings.TrimSuffix(v, "'")
			}
		case <-deadline:
			t.Fatal("no connection string within 90 s")
		}
	}
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		t.Fatalf("the printed connection string: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.CreateTable(ctx, "servecheck"); err != nil {
		t.Fatalf("Azurite behind the printed connection string: %v", err)
	}
	var tableHost string
	for _, part := range strings.Split(conn, ";") {
		if v, ok := strings.CutPrefix(part, "TableEndpoint="); ok {
			u, _ := url.Parse(v)
			tableHost = u.Host
		}
	}
	// Ctrl-C reaches the whole foreground group.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30 s after the interrupt")
	}
	if c, err := net.DialTimeout("tcp", tableHost, time.Second); err == nil {
		c.Close()
		t.Fatalf("something still listens on %s after the interrupt", tableHost)
	}
}
