package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// subprocess runs the command as a child process: the test binary itself,
// which TestMain turns into tablekit.
func subprocess(args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Env = []string{"TABLEKIT_CLI_MAIN=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	return c
}

// TestImportKillAndResume imports a file in a child process, kills it at
// random moments (SIGKILL, or SIGINT as Ctrl-C does), runs the same command
// again until it completes, and then verifies the table against one
// imported in one go: every row present once, none lost, none changed.
// Every other kill of the first five waits until the run has recorded
// progress in the checkpoint, so some kill lands while transactions are in
// flight with units left to write; the test counts those kills and
// requires one.
func TestImportKillAndResume(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		parts, rows, pace := 40, 500, "20ms"
		if b.name == "azurite" {
			parts, rows, pace = 20, 200, "20ms"
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "big.jsonl")
		var sb strings.Builder
		for p := range parts {
			for r := range rows {
				fmt.Fprintf(&sb, `{"PartitionKey":"p%03d","RowKey":"r%05d","N@odata.type":"Edm.Int64","N":"%d","V@odata.type":"Edm.Double","V":%d.0}`+"\n", p, r, p*rows+r, r)
			}
		}
		// the rows come in an order that mixes partitions, as exports of several tables might
		lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		total := parts * rows

		// the reference: imported in one go, timed
		ref := b.table("Ref")
		refFlags := b.flags
		if b.name == "memstore" {
			refFlags = []string{"--local", t.TempDir()}
		}
		start := time.Now()
		c := subprocess(append(append([]string{}, refFlags...), "import", ref, in, "--create", "--chunk", "2000", "--pace", pace)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("reference import: %v\n%s", err, out)
		}
		full := time.Since(start)

		// One attempt imports into a table of its own with a checkpoint of
		// its own. A machine fast enough to write every unit before the first
		// checkpoint record (500 ms) leaves no kill in the writing phase; the
		// attempt is then run again on a fresh table, paced more slowly.
		var (
			big, ckpt, unknown              string
			args                            []string
			kills, interrupted, runs, units int
			streaming                       int
			killed                          []grown
			last                            []byte
		)
		for attempt := 1; ; attempt++ {
			big = b.table(fmt.Sprintf("Big%d", attempt))
			ckpt = filepath.Join(dir, fmt.Sprintf("big%d.ckpt", attempt))
			unknown = filepath.Join(dir, fmt.Sprintf("big%d.unknown", attempt))
			args = append(append([]string{}, b.flags...), "import", big, in, "--create", "--chunk", "2000", "--checkpoint", ckpt, "--unknown", unknown, "--pace", pace, "-q")
			if b.name == "azurite" {
				args = append(args, "--parallel", "2")
			}
			kills, interrupted, runs, units, streaming, killed, last = killAndResume(t, args, ckpt, full, rng)
			if streaming > 0 || attempt == 3 {
				break
			}
			t.Logf("%s: attempt %d with --pace %s: no kill landed while the import was writing (checkpoint units before and after each kill %v, of %d); again on a fresh table, paced twice as slowly", b.name, attempt, pace, killed, units)
			d, _ := time.ParseDuration(pace)
			pace = (2 * d).String()
		}
		if streaming == 0 {
			t.Errorf("no kill landed while the import was writing: %d kills, checkpoint units before and after each %v of %d", kills, killed, units)
		}
		if c := subprocess(args...); true {
			// one more run: everything is done, nothing is written again
			out, err := c.Output()
			if err != nil {
				t.Fatalf("run after completion: %v", err)
			}
			if !strings.Contains(string(out), fmt.Sprintf(`"resumed":%d`, total)) {
				t.Errorf("run after completion wrote again: %s", out)
			}
		}
		verifyArgs := append(append([]string{}, refFlags...), "verify", ref, big)
		if b.name == "memstore" {
			verifyArgs = append(verifyArgs, "--to-local", b.flags[1])
		}
		vc := subprocess(verifyArgs...)
		vout, verr := vc.CombinedOutput()
		m := regexp.MustCompile(`source (\d+) rows in (\d+) partitions, target (\d+) rows in (\d+) partitions; lost (\d+), extra (\d+), changed (\d+)`).FindStringSubmatch(string(vout))
		if verr != nil || m == nil {
			t.Fatalf("verify: %v\n%s\nlast import run: %s", verr, vout, last)
		}
		unk, _ := os.ReadFile(unknown)
		t.Logf("%s: an uninterrupted import took %v; the last run: %s", b.name, full.Round(time.Millisecond), bytes.TrimSpace(last))
		t.Logf("%s: %d kills, %d of them while writing (the killed run had recorded units and left some: checkpoint units before and after each kill %v, of %d)", b.name, kills, streaming, killed, units)
		t.Logf("%s: %d rows in %d partitions; %d runs, %d kills, %d runs interrupted; verify: source %s rows, target %s rows, lost %s, extra %s, changed %s, duplicated 0 (a key is stored once); unknown outcomes listed: %d",
			b.name, total, parts, runs, kills, interrupted, m[1], m[3], m[5], m[6], m[7], strings.Count(string(unk), "\n"))
		if m[1] != fmt.Sprint(total) || m[3] != fmt.Sprint(total) || m[5] != "0" || m[6] != "0" || m[7] != "0" {
			t.Errorf("verify after kills: %s", vout)
		}
	})
}

// TestCopyKillAndResume copies a table in a child process, kills it at
// random moments, runs the same command again until it completes, and
// verifies the copy.
func TestCopyKillAndResume(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		parts, rows := 60, 100
		if b.name == "azurite" {
			parts, rows = 30, 50
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "src.jsonl")
		var sb strings.Builder
		for p := range parts {
			for r := range rows {
				// keys spread over the default splits: digits, upper and lower case
				fmt.Fprintf(&sb, `{"PartitionKey":"%c%03d","RowKey":"r%04d","N":%d}`+"\n", "0369ADGKPTXbfjmqux"[p%18], p, r, r)
			}
		}
		os.WriteFile(in, []byte(sb.String()), 0o644)
		src, dst := b.table("CopySrc"), b.table("CopyDst")
		if r := run(t, b.env, "", append(append([]string{}, b.flags...), "import", src, in, "--create")...); r.code != 0 {
			t.Fatalf("import: %s", r.err)
		}
		args := append(append([]string{}, b.flags...), "copy", src, dst, "--create", "--checkpoint", filepath.Join(dir, "copy.ckpt"), "--pace", "10ms", "--parallel", "2", "-q")
		start := time.Now()
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
		kills, runs := 0, 0
		for {
			runs++
			c := subprocess(args...)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			var err error
			if runs > 5 {
				err = <-done
			} else {
				select {
				case err = <-done:
				case <-time.After(time.Duration(150+rng.IntN(400)) * time.Millisecond):
					c.Process.Signal(syscall.SIGKILL)
					kills++
					err = <-done
				}
			}
			if err == nil {
				break
			}
			if runs > 20 {
				t.Fatalf("copy did not complete in %d runs", runs)
			}
		}
		vargs := append(append([]string{}, b.flags...), "verify", src, dst)
		out, err := subprocess(vargs...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("source %d rows in %d partitions, target %d rows in %d partitions; lost 0, extra 0, changed 0", parts*rows, parts, parts*rows, parts)) {
			t.Fatalf("verify after the copy: %v\n%s", err, out)
		}
		t.Logf("%s: copy of %d rows in %d partitions: %d runs, %d kills, %v in all; verify: lost 0, extra 0, changed 0", b.name, parts*rows, parts, runs, kills, time.Since(start).Round(time.Millisecond))
	})
}

// grown is, for one kill, the units the checkpoint held before and after the
// killed run.
type grown struct{ before, after int }

// killAndResume runs the import args in child processes, killing the first
// eight runs (every other of the first five once the run has recorded
// progress, the rest at random moments within full) and letting the next
// complete. It returns the counts of kills, interrupted runs and runs, the
// units recorded, the kills that landed while writing (the killed run
// recorded units and left some), each kill's units and the last run's output.
func killAndResume(t *testing.T, args []string, ckpt string, full time.Duration, rng *rand.Rand) (kills, interrupted, runs, units, streaming int, killed []grown, last []byte) {
	t.Helper()
	// recorded counts the units in the checkpoint; grown lists, for each
	// kill, the units recorded before and after the killed run
	recorded := func() int {
		b, _ := os.ReadFile(ckpt)
		return max(0, bytes.Count(b, []byte{'\n'})-1)
	}
	for runs < 30 {
		runs++
		before := recorded()
		c := subprocess(args...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		final := runs > 8 // after 8 kills, let it finish
		var err error
		if final {
			err = <-done
		} else {
			var wait <-chan time.Time
			stop := make(chan struct{})
			if runs%2 == 1 && runs <= 5 {
				// kill once this run has recorded progress: writing is under way
				tick := time.NewTicker(5 * time.Millisecond)
				progressed := make(chan time.Time, 1)
				go func() {
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case now := <-tick.C:
							if recorded() > before {
								progressed <- now
								return
							}
						}
					}
				}()
				wait = progressed
			} else {
				wait = time.After(time.Duration(float64(full) * (0.15 + 0.7*rng.Float64())))
			}
			select {
			case err = <-done:
			case <-wait:
				sig := syscall.SIGKILL
				if rng.IntN(3) == 0 {
					sig = syscall.SIGINT
				}
				c.Process.Signal(sig)
				kills++
				err = <-done
				killed = append(killed, grown{before, recorded()})
			}
			close(stop)
		}
		last = out.Bytes()
		if err == nil {
			break
		}
		interrupted++
	}
	// a kill in the streaming phase: the killed run recorded units (its
	// transactions were under way) and left some to write
	units = recorded()
	for _, k := range killed {
		if k.after > k.before && k.after < units {
			streaming++
		}
	}
	return kills, interrupted, runs, units, streaming, killed, last
}
