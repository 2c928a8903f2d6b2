package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// entityOut prints entities on stdout: JSON lines as they come, tables and
// CSV once all are in (their columns depend on every row).
type entityOut struct {
	format string
	w      io.Writer
	bw     *bufio.Writer
	rows   []store.Entity
	buf    []byte
}

func newEntityOut(format string, w io.Writer) *entityOut {
	return &entityOut{format: format, w: w, bw: bufio.NewWriter(w)}
}

func (o *entityOut) add(e store.Entity) error {
	if o.format == "jsonl" {
		var err error
		if o.buf, err = entityio.AppendJSON(o.buf[:0], &e, true); err != nil {
			return err
		}
		_, err = o.bw.Write(append(o.buf, '\n'))
		return err
	}
	o.rows = append(o.rows, e)
	return nil
}

func (o *entityOut) close() error {
	switch o.format {
	case "csv":
		cols, err := entityio.Columns(o.rows)
		if err != nil {
			return err
		}
		cw, err := entityio.NewCSVWriter(o.bw, cols, true)
		if err != nil {
			return err
		}
		for i := range o.rows {
			if err := cw.Write(&o.rows[i]); err != nil {
				return err
			}
		}
		if err := cw.Flush(); err != nil {
			return err
		}
	case "table":
		cols, err := entityio.Columns(o.rows)
		if err != nil {
			return err
		}
		head := []string{"PartitionKey", "RowKey", "Timestamp"}
		count := map[string]int{}
		for _, c := range cols {
			count[c.Name]++
		}
		for _, c := range cols {
			if count[c.Name] > 1 {
				head = append(head, c.String())
			} else {
				head = append(head, c.Name)
			}
		}
		var rows [][]string
		for _, e := range o.rows {
			r := []string{e.PartitionKey, e.RowKey, string(wire.AppendTime(nil, e.Timestamp))}
			for _, c := range cols {
				cell := ""
				if v, ok := e.Properties[c.Name]; ok {
					if t, _ := store.TypeOf(v); t == c.Type {
						cell = entityio.FormatValue(v)
					}
				}
				r = append(r, cell)
			}
			rows = append(rows, r)
		}
		writeTable(o.bw, head, rows)
	}
	return o.bw.Flush()
}

// cellText keeps a table cell on one line.
func cellText(s string) string {
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func writeTable(w io.Writer, head []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = cellText(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// printRows prints records of named fields in the output format.
func printRows(format string, w io.Writer, cols []string, rows [][]any) error {
	bw := bufio.NewWriter(w)
	switch format {
	case "jsonl":
		for _, r := range rows {
			bw.WriteByte('{')
			for i, c := range cols {
				if i > 0 {
					bw.WriteByte(',')
				}
				k, _ := json.Marshal(c)
				v, err := json.Marshal(r[i])
				if err != nil {
					return err
				}
				bw.Write(k)
				bw.WriteByte(':')
				bw.Write(v)
			}
			bw.WriteString("}\n")
		}
	case "csv":
		cw := csv.NewWriter(bw)
		cw.Write(cols)
		for _, r := range rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = fmt.Sprint(v)
			}
			cw.Write(rec)
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	default:
		var text [][]string
		for _, r := range rows {
			rec := make([]string, len(r))
			for i, v := range r {
				rec[i] = fmt.Sprint(v)
			}
			text = append(text, rec)
		}
		writeTable(bw, cols, text)
	}
	return bw.Flush()
}

// progress is a progress bar on stderr, shown only when stderr is a
// terminal and --quiet is off.
type progress struct {
	bar *progressbar.ProgressBar
}

func (a *app) progress(total int, what string) *progress {
	if a.quiet || !isTerminal(a.env.Stderr, a.env.StderrTerminal) {
		return &progress{}
	}
	if total <= 0 {
		total = -1
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(a.env.Stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) set(n int) {
	if p.bar != nil {
		p.bar.Set(n)
	}
}

func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
