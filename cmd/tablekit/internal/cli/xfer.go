package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/transfer"
	"github.com/tablekit/tablekit/store"
)

func formatOf(flag, path string) (string, error) {
	switch flag {
	case "jsonl", "json", "csv":
		if flag == "json" {
			return "jsonl", nil
		}
		return flag, nil
	case "", "auto":
		if strings.HasSuffix(strings.ToLower(path), ".csv") {
			return "csv", nil
		}
		return "jsonl", nil
	}
	return "", usagef("--format %q: use jsonl or csv", flag)
}

func (a *app) exportCmd() *cobra.Command {
	var q queryFlags
	var out, formatFlag string
	var meta bool
	var parallel int
	c := &cobra.Command{Use: "export TABLE", Short: "Export a table (or a $filter, or a partition range) to JSON lines or CSV", Args: nArgs(1, 1),
		Long: `Export writes the entities of a table to a file (or standard output) as JSON
lines, one entity a line with its EDM types kept in "@odata.type" annotations
(Int64, DateTime at 100 ns, Guid, Binary, every Double, whole ones as 1.0), or
as CSV under a typed header (PartitionKey,RowKey,Name:Edm.Int64,...). import
reads both back. The file is written to a temporary name and renamed when
complete.

JSON lines are read --parallel partitions at once (found one after another
with a one-entity query each) and written in key order, partition by
partition, each in RowKey order: the same file as one query gives.
--parallel 1 reads the table in one query; CSV is always read in one.`,
		Example: `  tablekit export Orders --out orders.jsonl
  tablekit export Orders --from-pk cust-10 --to-pk cust-20 --out some.jsonl
  tablekit export Orders --filter "Status eq 'open'" --format csv --out open.csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := formatOf(formatFlag, out)
			if err != nil {
				return err
			}
			query, _, err := q.build()
			if err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			bar := a.progress(-1, "export "+args[0])
			var res transfer.ExportResult
			write := func(w io.Writer) error {
				var err error
				res, err = transfer.ExportParallel(cmd.Context(), cn.st.Table(args[0]), query,
					transfer.ExportOptions{Format: format, WithMeta: meta, Parallel: parallel, Progress: bar.set}, w)
				return err
			}
			if out == "" || out == "-" {
				err = write(a.env.Stdout)
			} else {
				err = atomicfile.Write(out, write)
			}
			bar.done()
			if err != nil {
				return err
			}
			if out != "" && out != "-" {
				a.say("exported %d entities in %d partitions from %s to %s", res.Rows, len(res.Partitions), args[0], out)
			}
			return nil
		}}
	q.register(c, true)
	c.Flags().StringVar(&out, "out", "", "the file to write (default: standard output)")
	c.Flags().StringVar(&formatFlag, "format", "auto", "jsonl or csv (auto: csv for a .csv file, else jsonl)")
	c.Flags().BoolVar(&meta, "meta", false, "add each entity's Timestamp and ETag")
	c.Flags().IntVar(&parallel, "parallel", 4, "partitions read at once (1: the table in one query)")
	return c
}

type importHeader struct {
	Kind  string `json:"kind"`
	Table string `json:"table"`
	Input string `json:"input"`
	Mode  string `json:"mode"`
	Chunk int    `json:"chunk"`
}

func (a *app) importCmd() *cobra.Command {
	var formatFlag, mode, checkpoint, unknown string
	var check, create bool
	var parallel, chunk int
	var pace time.Duration
	c := &cobra.Command{Use: "import TABLE [FILE]", Short: "Import JSON lines or CSV through the bulk writer, resumable", Args: nArgs(1, 2),
		Long: `Import reads every line of FILE (or standard input) and checks each entity
with the service's rules before writing anything: a bad line stops the import
with its line number and the rule it breaks, and nothing is written. --check
only checks.

The entities are then written through the bulk writer in transactions of up
to 100, --parallel of them in flight from the first line to the last. With
--checkpoint FILE, the lines of each partition within each input chunk
(--chunk lines) are recorded there once they and the partition's earlier
lines are written (after a local store's snapshot is saved), so the same
command run again after a crash or Ctrl-C skips what is done and writes the
rest.

--mode upsert (the default) inserts or replaces, merge inserts or merges:
both repeat harmlessly, so a partition interrupted half-way is simply written
again. --mode insert refuses to overwrite: a row that exists with the same
values (written by the interrupted run) counts as present, one with other
values fails. A write whose outcome stays unknown (its answer was lost and
reading the row back could not tell) is never sent again: it is listed in
the --unknown file, for 'tablekit settle'.`,
		Example: `  tablekit import Orders orders.jsonl --create
  tablekit import Orders orders.csv --check
  tablekit import Orders big.jsonl --checkpoint big.ckpt --unknown big.unknown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 2 {
				path = args[1]
			}
			format, err := formatOf(formatFlag, path)
			if err != nil {
				return err
			}
			if _, err := transfer.Kind(mode); err != nil {
				return &usageError{err}
			}
			if err := store.ValidateTableName(args[0]); err != nil {
				return &usageError{err}
			}
			var data []byte
			name := "standard input"
			if path == "" || path == "-" {
				data, err = io.ReadAll(a.env.Stdin)
			} else {
				name = path
				data, err = os.ReadFile(path)
			}
			if err != nil {
				return err
			}
			recs, err := entityio.Parse(data, format)
			if err != nil {
				return fmt.Errorf("%s: %w; nothing was written", name, err)
			}
			parts := map[string]bool{}
			for _, r := range recs {
				parts[r.Entity.PartitionKey] = true
			}
			if check {
				a.say("%s: %d entities in %d partitions, every line valid; nothing was written (--check)", name, len(recs), len(parts))
				return nil
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			if create {
				created, err := cn.st.CreateTableIfNotExists(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				cn.dirty = cn.dirty || created
			}
			sum := sha256.Sum256(data)
			var cp *transfer.Checkpoint
			if checkpoint != "" {
				cp, err = transfer.OpenCheckpoint(checkpoint, importHeader{"import", args[0], hex.EncodeToString(sum[:]), mode, chunk})
				if err != nil {
					return err
				}
				defer cp.Close()
				if n := cp.Count(); n > 0 {
					a.say("resuming from %s: %d partition chunks done", checkpoint, n)
				}
			}
			var uw io.Writer
			var uf *os.File
			if unknown != "" {
				uf, err = os.OpenFile(unknown, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					return err
				}
				defer uf.Close()
				uw = &syncedWriter{f: uf}
			}
			bar := a.progress(len(recs), "import "+args[0])
			cn.dirty = true
			rep, err := transfer.Import(cmd.Context(), cn.st.Table(args[0]), recs, transfer.ImportOptions{
				Mode: mode, Chunk: chunk, Parallel: parallel, Checkpoint: cp, Flush: cn.flush(cmd.Context()),
				Unknown: uw, Progress: bar.set, Pace: pace,
			})
			bar.done()
			serr := cn.save(context.WithoutCancel(cmd.Context()))
			a.reportImport(name, args[0], rep, unknown)
			if uf != nil {
				uf.Sync()
			}
			format2, ferr := a.format()
			if ferr == nil {
				printRows(format2, a.env.Stdout, []string{"table", "rows", "written", "present", "resumed", "failed", "unknown", "not_sent"},
					[][]any{{args[0], rep.Total, rep.Written, rep.Present, rep.Resumed, rep.Failed, rep.Unknown, rep.NotSent}})
			}
			if err = errors.Join(err, serr); err != nil {
				return err
			}
			if rep.Failed > 0 || rep.Unknown > 0 || rep.NotSent > 0 {
				return errReported
			}
			return nil
		}}
	c.Flags().StringVar(&formatFlag, "format", "auto", "jsonl or csv (auto: csv for a .csv file, else jsonl)")
	c.Flags().StringVar(&mode, "mode", "upsert", "upsert (insert or replace), merge (insert or merge) or insert (never overwrite)")
	c.Flags().StringVar(&checkpoint, "checkpoint", "", "record progress here; the same command resumes from it")
	c.Flags().StringVar(&unknown, "unknown", "", "append each write whose outcome is unknown to this file (JSON lines), for settle")
	c.Flags().BoolVar(&check, "check", false, "check every line and write nothing")
	c.Flags().BoolVar(&create, "create", false, "create the table if it does not exist")
	c.Flags().IntVar(&parallel, "parallel", store.DefaultBulkConcurrency, "transactions in flight at once")
	c.Flags().IntVar(&chunk, "chunk", 10000, "input lines a chunk: the unit of the checkpoint with the partition")
	c.Flags().DurationVar(&pace, "pace", 0, "pause this long before each batch, to spare a busy account (e.g. 20ms)")
	return c
}

type syncedWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *syncedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(b)
}

func (a *app) reportImport(name, table string, rep transfer.ImportReport, unknown string) {
	a.say("import %s into %s: %d entities: %d written, %d already present, %d done by an earlier run, %d failed, %d unknown, %d not sent",
		name, table, rep.Total, rep.Written, rep.Present, rep.Resumed, rep.Failed, rep.Unknown, rep.NotSent)
	for i, f := range rep.Failures {
		if i == 20 {
			a.say("  ... and %d more failures", rep.Failed-20)
			break
		}
		a.say("  line %d (%s/%s) not written: %v", f.Line, f.PK, f.RK, f.Err)
	}
	if rep.Unknown > 0 {
		if unknown != "" {
			a.say("  %d writes have an unknown outcome: listed in %s; run 'tablekit settle %s' to settle them", rep.Unknown, unknown, unknown)
		} else {
			a.say("  %d writes have an unknown outcome: rerun with --unknown FILE to list them", rep.Unknown)
		}
	}
	if rep.Stopped != nil {
		a.say("  stopped (%v) before every line was written (first line not written: %d); run the same command again to resume", rep.Stopped, rep.FirstLine)
	}
}

func (a *app) settleCmd() *cobra.Command {
	var resend bool
	c := &cobra.Command{Use: "settle FILE", Short: "Settle the writes an import left with an unknown outcome", Args: nArgs(1, 1),
		Long: `Settle reads an --unknown file of import and reads each row back: "applied"
when the row holds the written values, "not applied" when it is missing,
"changed" when it holds other values (another writer, or not applied).
--resend inserts the rows that are not applied (an insert: it fails rather
than overwrite a row that appeared in the meantime).`,
		Example: "  tablekit settle big.unknown\n  tablekit settle big.unknown --resend",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			var rows [][]any
			pending := 0
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(make([]byte, 1<<20), 8<<20)
			n := 0
			for sc.Scan() {
				n++
				if len(bytes.TrimSpace(sc.Bytes())) == 0 {
					continue
				}
				var u transfer.UnknownWrite
				if err := json.Unmarshal(sc.Bytes(), &u); err != nil {
					return fmt.Errorf("%s line %d: %v", args[0], n, err)
				}
				e, err := entityio.DecodeJSON(u.Entity)
				if err != nil {
					return fmt.Errorf("%s line %d: %v", args[0], n, err)
				}
				t := cn.st.Table(u.Table)
				state := ""
				got, err := t.Get(cmd.Context(), e.PartitionKey, e.RowKey, nil)
				switch {
				case err == nil && transfer.SameProperties(got.Properties, e.Properties):
					state = "applied"
				case err == nil:
					state = "changed"
					pending++
				case store.EntityNotFound(err):
					state = "not applied"
					if resend {
						if _, err := t.Insert(cmd.Context(), e); err != nil {
							state = "not applied; resend failed: " + err.Error()
							pending++
						} else {
							state = "not applied; resent"
							cn.dirty = true
						}
					} else {
						pending++
					}
				default:
					state = "unknown: " + err.Error()
					pending++
				}
				rows = append(rows, []any{u.Line, u.Table, e.PartitionKey, e.RowKey, state})
			}
			if err := cn.save(cmd.Context()); err != nil {
				return err
			}
			if err := printRows(format, a.env.Stdout, []string{"line", "table", "pk", "rk", "state"}, rows); err != nil {
				return err
			}
			if pending > 0 {
				a.say("settle: %d of %d writes still need a decision", pending, len(rows))
				return errReported
			}
			return nil
		}}
	c.Flags().BoolVar(&resend, "resend", false, "insert the rows found not applied")
	return c
}

// openPair opens the source and the destination (the source's account
// unless --to-* names another).
func (a *app) openPair(ctx context.Context, to *connFlags) (*conn, *conn, error) {
	src, err := a.open(ctx, &a.src)
	if err != nil {
		return nil, nil, err
	}
	if !to.given() {
		return src, src, nil
	}
	if to.local != "" && src.local != "" && filepath.Clean(to.local) == filepath.Clean(src.local) {
		return src, src, nil
	}
	dst, err := a.open(ctx, to)
	return src, dst, err
}

type copyHeader struct {
	Kind   string   `json:"kind"`
	Src    string   `json:"src"`
	Dst    string   `json:"dst"`
	Filter string   `json:"filter"`
	Splits []string `json:"splits"`
}

func (a *app) copyCmd() *cobra.Command {
	var to connFlags
	var q queryFlags
	var checkpoint, splits string
	var parallel int
	var create bool
	var pace time.Duration
	c := &cobra.Command{Use: "copy SRC DST", Short: "Copy a table to another table or account, partition ranges in parallel, resumable", Args: nArgs(2, 2),
		Long: `Copy reads SRC in partition ranges (split at --splits, by default at the
leading characters 0 5 A H O V a h o v), several at once, and writes each page
into DST with upserts through the bulk writer. With --checkpoint FILE every
range copied is recorded, so the same command run again skips it. The copy
of a table in use is not a point-in-time image; check it with verify.`,
		Example: `  tablekit copy Orders OrdersCopy --create
  tablekit copy Orders Orders --to-conn-file other.conn --create --checkpoint copy.ckpt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if q.filter != "" || q.fromPK != "" || q.toPK != "" {
				if _, _, err := q.build(); err != nil {
					return err
				}
			}
			query, _, _ := q.build()
			src, dst, err := a.openPair(cmd.Context(), &to)
			if err != nil {
				return err
			}
			if src == dst && args[0] == args[1] {
				return usagef("copy %s onto itself: name another table or --to-... another account", args[0])
			}
			if create {
				created, err := dst.st.CreateTableIfNotExists(cmd.Context(), args[1])
				if err != nil {
					return err
				}
				dst.dirty = dst.dirty || created
			}
			sp := transfer.DefaultSplits
			if splits != "" {
				sp = splitList(splits)
				sort.Strings(sp)
			}
			var cp *transfer.Checkpoint
			if checkpoint != "" {
				cp, err = transfer.OpenCheckpoint(checkpoint, copyHeader{"copy", args[0], args[1], query.Filter, sp})
				if err != nil {
					return err
				}
				defer cp.Close()
			}
			bar := a.progress(-1, "copy "+args[0])
			dst.dirty = true
			var unknownRows []string
			var umu sync.Mutex
			rep, err := transfer.Copy(cmd.Context(), src.st.Table(args[0]), dst.st.Table(args[1]), transfer.CopyOptions{
				Filter: query.Filter, Splits: sp, Parallel: parallel, Checkpoint: cp, Flush: dst.flush(cmd.Context()),
				Progress: bar.set, Pace: pace,
				Unknown: func(e store.Entity, err error) {
					umu.Lock()
					unknownRows = append(unknownRows, e.PartitionKey+"/"+e.RowKey)
					umu.Unlock()
				},
			})
			bar.done()
			serr := dst.save(context.WithoutCancel(cmd.Context()))
			a.say("copy %s to %s: %d ranges (%d done by an earlier run), %d entities read, %d written, %d failed, %d unknown",
				args[0], args[1], rep.Ranges, rep.RangesResumed, rep.Read, rep.Written, rep.Failed, rep.Unknown)
			for _, k := range unknownRows {
				a.say("  unknown outcome: %s (an upsert: copying again settles it)", k)
			}
			if rep.Stopped != nil {
				a.say("  stopped (%v); run the same command again to resume", rep.Stopped)
			}
			if err = errors.Join(err, serr); err != nil {
				return err
			}
			if rep.Stopped != nil || rep.Failed > 0 || rep.Unknown > 0 {
				return errReported
			}
			return nil
		}}
	to.register(c.Flags(), "to-")
	q.register(c, false)
	c.Flags().StringVar(&checkpoint, "checkpoint", "", "record the ranges copied here; the same command resumes from it")
	c.Flags().StringVar(&splits, "splits", "", "PartitionKey boundaries of the ranges, comma-separated")
	c.Flags().IntVar(&parallel, "parallel", 4, "ranges copied at once")
	c.Flags().BoolVar(&create, "create", false, "create DST if it does not exist")
	c.Flags().DurationVar(&pace, "pace", 0, "pause this long before each batch written, to spare a busy account")
	return c
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func (a *app) verifyCmd(name string) *cobra.Command {
	var to connFlags
	var q queryFlags
	var show int
	var all bool
	c := &cobra.Command{Args: nArgs(2, 2)}
	if name == "verify" {
		c.Use = "verify SRC DST"
		c.Short = "Compare two tables: counts and a checksum per partition, the differing keys listed"
		c.Example = "  tablekit verify Orders OrdersCopy\n  tablekit verify Orders Orders --to-local ./restored"
		c.Long = c.Short + `.

The checksum of a partition is the SHA-256 of its rows' canonical JSON lines
(keys and typed properties; not Timestamp or ETag), so equal data has equal
sums in any account. Lost rows are in SRC and not in DST, extra rows in DST
and not in SRC, changed rows in both with other values. Exit code 1 when the
tables differ.`
	} else {
		c.Use = "diff A B"
		c.Short = "List the keys whose rows differ between two tables, and the properties that differ"
		c.Example = "  tablekit diff Orders OrdersCopy"
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		format, err := a.format()
		if err != nil {
			return err
		}
		query, _, err := q.build()
		if err != nil {
			return err
		}
		src, dst, err := a.openPair(cmd.Context(), &to)
		if err != nil {
			return err
		}
		var diffs [][]any
		nd := 0
		res, err := transfer.Compare(cmd.Context(), src.st.Table(args[0]), dst.st.Table(args[1]), query, func(d transfer.Diff) {
			nd++
			if name == "diff" {
				diffs = append(diffs, []any{d.Kind, d.PK, d.RK, propDiff(d)})
			} else if nd <= show {
				a.say("  %s: %s/%s", d.Kind, d.PK, d.RK)
			}
		})
		if err != nil {
			return err
		}
		if name == "diff" {
			if err := printRows(format, a.env.Stdout, []string{"kind", "pk", "rk", "properties"}, diffs); err != nil {
				return err
			}
		} else {
			if nd > show {
				a.say("  ... and %d more differing keys", nd-show)
			}
			var rows [][]any
			for _, p := range res.Partitions {
				if !all && p.Same() && format == "table" && len(res.Partitions) > 50 {
					continue
				}
				state := "same"
				if !p.Same() {
					state = "differs"
				}
				sa, sb := p.SumA, p.SumB
				if format == "table" {
					sa, sb = short(sa), short(sb)
				}
				rows = append(rows, []any{p.PK, p.RowsA, p.RowsB, sa, sb, p.Lost, p.Extra, p.Changed, state})
			}
			if err := printRows(format, a.env.Stdout, []string{"pk", "rows_source", "rows_target", "sha256_source", "sha256_target", "lost", "extra", "changed", "state"}, rows); err != nil {
				return err
			}
		}
		verdict := "same"
		if res.Lost+res.Extra+res.Changed > 0 {
			verdict = "DIFFERENT"
		}
		a.say("%s %s %s: source %d rows in %d partitions, target %d rows in %d partitions; lost %d, extra %d, changed %d, duplicated 0: %s",
			name, args[0], args[1], res.RowsA, res.PartitionsA, res.RowsB, res.PartitionsB, res.Lost, res.Extra, res.Changed, verdict)
		if verdict != "same" {
			return errReported
		}
		return nil
	}
	to.register(c.Flags(), "to-")
	q.register(c, false)
	if name == "verify" {
		c.Flags().IntVar(&show, "show", 20, "list at most this many differing keys on stderr")
		c.Flags().BoolVar(&all, "all", false, "list every partition, also on a terminal with many")
	}
	return c
}

// propDiff names the properties that differ, for diff.
func propDiff(d transfer.Diff) string {
	if d.A == nil || d.B == nil {
		return ""
	}
	names := map[string]bool{}
	for k := range d.A.Properties {
		names[k] = true
	}
	for k := range d.B.Properties {
		names[k] = true
	}
	var out []string
	for k := range names {
		va, oka := d.A.Properties[k]
		vb, okb := d.B.Properties[k]
		switch {
		case oka && !okb:
			out = append(out, k+": "+entityio.FormatValue(va)+" -> (absent)")
		case !oka && okb:
			out = append(out, k+": (absent) -> "+entityio.FormatValue(vb))
		case !store.SameValue(va, vb):
			ta, _ := store.TypeOf(va)
			tb, _ := store.TypeOf(vb)
			out = append(out, fmt.Sprintf("%s: %s %s -> %s %s", k, ta, entityio.FormatValue(va), tb, entityio.FormatValue(vb)))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func (a *app) backupCmd() *cobra.Command {
	var tables, container string
	c := &cobra.Command{Use: "backup [DIR]", Short: "Back up every table (or --tables) into a new folder under DIR (or a blob container), with a manifest", Args: nArgs(0, 1),
		Long: `Backup writes each table to DIR/<UTC time>/<table>.jsonl and, last, a
manifest.json naming what was read and when, with counts and checksums per
partition and the SHA-256 of each file. A folder without a manifest is an
incomplete backup. The service has no snapshot: a backup of a table in use is
not a point-in-time image (see docs/cli.md).

With --container NAME the files go to blobs <UTC time>/<table>.jsonl of that
container in the same account (created if missing), each held in memory and
put whole.`,
		Example: "  tablekit backup backups\n  tablekit backup backups --tables Orders,Customers\n  tablekit backup --container backups",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			if (len(args) == 1) == (container != "") {
				return usagef("backup needs a folder DIR or --container NAME (one of them)")
			}
			if container != "" {
				if err := store.ValidateContainerName(container); err != nil {
					return &usageError{err}
				}
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			names := splitList(tables)
			if names == nil {
				if names, err = listTables(cmd, cn.st, ""); err != nil {
					return err
				}
			}
			stamp := time.Now().UTC().Format("20060102T150405.000Z")
			var sink transfer.Sink
			where := ""
			if container != "" {
				if cn.local != "" {
					return usagef("backup --container needs an Azure account or Azurite: a --local folder keeps no blobs")
				}
				ct := cn.st.Container(container)
				if err := ct.Create(cmd.Context()); err != nil && store.Status(err) != 409 {
					return err
				}
				sink = transfer.Blobs{Container: ct, Prefix: stamp + "/"}
				where = "container " + container + ", blobs " + stamp + "/"
			} else {
				run := filepath.Join(args[0], stamp)
				sink = transfer.Folder(run)
				where = run
			}
			bar := a.progress(-1, "backup")
			m, err := transfer.Backup(cmd.Context(), cn.st, names, sink, func(t string, n int) { bar.set(n) })
			bar.done()
			if err != nil {
				return fmt.Errorf("backup into %s stopped: %w (no manifest was written: it is not a backup)", where, err)
			}
			var rows [][]any
			for _, t := range m.Tables {
				rows = append(rows, []any{t.Name, t.Rows, len(t.Partitions), t.File})
			}
			if err := printRows(format, a.env.Stdout, []string{"table", "rows", "partitions", "file"}, rows); err != nil {
				return err
			}
			a.say("backup of %d tables in %s", len(m.Tables), where)
			return nil
		}}
	c.Flags().StringVar(&tables, "tables", "", "only these tables (comma-separated)")
	c.Flags().StringVar(&container, "container", "", "write the backup to this blob container of the account")
	return c
}

func (a *app) restoreCmd() *cobra.Command {
	var tables, container string
	var to connFlags
	c := &cobra.Command{Use: "restore BACKUP", Short: "Restore a backup (a folder, or a run in a blob container) into the account", Args: nArgs(1, 1),
		Long: `Restore checks every file of the backup against the manifest's SHA-256, then
creates each table (if missing) and upserts its rows through the bulk writer.
Rows already in the table that the backup does not hold are left alone.

BACKUP is a backup folder (DIR/<UTC time>), restored into the account the
connection flags name; or, with --container NAME, the <UTC time> of a run in
that container of the account, restored into the account the --to-* flags
name (the same one by default).`,
		Example: "  tablekit restore backups/20260102T030405.000Z --local ./elsewhere\n  tablekit restore --container backups 20260102T030405.000Z --to-conn-file other.conn",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			want := map[string]bool{}
			for _, t := range splitList(tables) {
				want[t] = true
			}
			var sink transfer.Sink
			var cn *conn
			if container != "" {
				src, dst, err := a.openPair(cmd.Context(), &to)
				if err != nil {
					return err
				}
				sink, cn = transfer.Blobs{Container: src.st.Container(container), Prefix: strings.TrimSuffix(args[0], "/") + "/"}, dst
			} else {
				if to.given() {
					return usagef("--to-... flags go with --container; a folder restores into the account the connection flags name")
				}
				sink = transfer.Folder(args[0])
			}
			m, files, err := transfer.ReadManifest(cmd.Context(), sink)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if cn == nil {
				if cn, err = a.open(cmd.Context(), &a.src); err != nil {
					return err
				}
			}
			cn.dirty = true
			var rows [][]any
			failed := false
			for _, t := range m.Tables {
				if len(want) > 0 && !want[t.Name] {
					continue
				}
				recs, err := entityio.Parse(files[t.File], "jsonl")
				if err != nil {
					return fmt.Errorf("%s: %w", t.File, err)
				}
				if _, err := cn.st.CreateTableIfNotExists(cmd.Context(), t.Name); err != nil {
					return err
				}
				rep, err := transfer.Import(cmd.Context(), cn.st.Table(t.Name), recs, transfer.ImportOptions{Mode: transfer.ModeUpsert})
				if err != nil {
					return err
				}
				if rep.Written != t.Rows {
					failed = true
					a.reportImport(t.File, t.Name, rep, "")
				}
				rows = append(rows, []any{t.Name, t.Rows, rep.Written})
			}
			if err := cn.save(cmd.Context()); err != nil {
				return err
			}
			if err := printRows(format, a.env.Stdout, []string{"table", "rows_in_backup", "written"}, rows); err != nil {
				return err
			}
			if failed {
				return errReported
			}
			a.say("restored %d tables from %s (backup started %s)", len(rows), args[0], m.Started.Format(time.RFC3339))
			return nil
		}}
	c.Flags().StringVar(&tables, "tables", "", "only these tables (comma-separated)")
	c.Flags().StringVar(&container, "container", "", "the backup is the run BACKUP in this blob container of the account")
	to.register(c.Flags(), "to-")
	return c
}
