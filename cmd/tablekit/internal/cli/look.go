package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

func (a *app) tablesCmd() *cobra.Command {
	c := &cobra.Command{Use: "tables", Short: "List, create and delete tables", Args: nArgs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("tables needs a subcommand: list, create or delete")
		}}
	var prefix string
	list := &cobra.Command{Use: "list", Short: "List the tables of the account", Args: nArgs(0, 0),
		Example: "  tablekit tables list\n  tablekit tables list --prefix Orders -o csv",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			names, err := listTables(cmd, cn.st, prefix)
			if err != nil {
				return err
			}
			rows := make([][]any, len(names))
			for i, n := range names {
				rows[i] = []any{n}
			}
			return printRows(format, a.env.Stdout, []string{"table"}, rows)
		}}
	list.Flags().StringVar(&prefix, "prefix", "", "only tables whose name starts with it")
	var ifNotExists bool
	create := &cobra.Command{Use: "create TABLE...", Short: "Create tables", Args: nArgs(1, -1),
		Example: "  tablekit tables create Orders Customers",
		RunE: func(cmd *cobra.Command, args []string) error {
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			for _, n := range args {
				if err := store.ValidateTableName(n); err != nil {
					return &usageError{err}
				}
			}
			var errs []error
			for _, n := range args {
				if ifNotExists {
					created, err := cn.st.CreateTableIfNotExists(cmd.Context(), n)
					if err != nil {
						errs = append(errs, fmt.Errorf("%s: %w", n, err))
						continue
					}
					cn.dirty = cn.dirty || created
					if created {
						a.say("created %s", n)
					} else {
						a.say("%s exists", n)
					}
					continue
				}
				if err := cn.st.CreateTable(cmd.Context(), n); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", n, err))
					continue
				}
				cn.dirty = true
				a.say("created %s", n)
			}
			return errors.Join(append(errs, cn.save(cmd.Context()))...)
		}}
	create.Flags().BoolVar(&ifNotExists, "if-not-exists", false, "a table that exists is not an error")
	var yes bool
	del := &cobra.Command{Use: "delete TABLE...", Short: "Delete tables and every entity in them", Args: nArgs(1, -1),
		Example: "  tablekit tables delete Scratch --yes",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return usagef("tables delete removes every entity of %s: add --yes to confirm", strings.Join(args, ", "))
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			var errs []error
			for _, n := range args {
				if err := cn.st.DeleteTable(cmd.Context(), n); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", n, err))
					continue
				}
				cn.dirty = true
				a.say("deleted %s", n)
			}
			return errors.Join(append(errs, cn.save(cmd.Context()))...)
		}}
	del.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	c.AddCommand(list, create, del)
	return c
}

func listTables(cmd *cobra.Command, st store.Store, prefix string) ([]string, error) {
	var names []string
	opts := store.ListTablesOptions{Prefix: prefix}
	for {
		p, err := st.ListTables(cmd.Context(), opts)
		if err != nil {
			return nil, err
		}
		for _, t := range p.Tables {
			names = append(names, t.Name)
		}
		if p.Continuation == "" {
			return names, nil
		}
		opts.Continuation = p.Continuation
	}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (a *app) getCmd() *cobra.Command {
	var sel string
	c := &cobra.Command{Use: "get TABLE PARTITIONKEY ROWKEY", Short: "Read one entity (a point read)", Args: nArgs(3, 3),
		Example: "  tablekit get Orders cust-17 order-0042\n  tablekit get Orders cust-17 order-0042 --select Total,Status -o jsonl",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			e, err := cn.st.Table(args[0]).Get(cmd.Context(), args[1], args[2], &store.GetOptions{Select: splitList(sel)})
			if err != nil {
				return err
			}
			out := newEntityOut(format, a.env.Stdout)
			out.add(e)
			if err := out.close(); err != nil {
				return err
			}
			if format == "table" {
				fmt.Fprintf(a.env.Stdout, "ETag: %s\n", e.ETag)
			}
			return nil
		}}
	c.Flags().StringVar(&sel, "select", "", "only these properties (comma-separated)")
	return c
}

// queryFlags are the selection flags of query, count and export.
type queryFlags struct {
	filter, sel    string
	fromPK, toPK   string
	top, pageSize  int
	scan, showPlan bool
}

func (q *queryFlags) register(c *cobra.Command, withSelect bool) {
	c.Flags().StringVar(&q.filter, "filter", "", "an OData $filter, checked before it is sent")
	c.Flags().StringVar(&q.fromPK, "from-pk", "", "only partitions from this PartitionKey on (inclusive)")
	c.Flags().StringVar(&q.toPK, "to-pk", "", "only partitions before this PartitionKey (exclusive)")
	if withSelect {
		c.Flags().StringVar(&q.sel, "select", "", "only these properties (comma-separated)")
	}
}

// build checks the filter with store/filter's parser and returns the query
// and its plan.
func (q *queryFlags) build() (store.Query, filter.Plan, error) {
	var conds []filter.Cond
	if q.filter != "" {
		f, err := filter.Parse(q.filter)
		if err != nil {
			return store.Query{}, filter.Plan{}, usagef("--filter: %s%s", filterMsg(err), caret(q.filter, err))
		}
		conds = append(conds, f.Cond())
	}
	if q.fromPK != "" {
		conds = append(conds, filter.PK.Ge(q.fromPK))
	}
	if q.toPK != "" {
		conds = append(conds, filter.PK.Lt(q.toPK))
	}
	text := ""
	if len(conds) == 1 && q.filter != "" && q.fromPK == "" && q.toPK == "" {
		text = q.filter
	} else if len(conds) > 0 {
		c := conds[0]
		if len(conds) > 1 {
			c = filter.And(conds...)
		}
		if err := c.Err(); err != nil {
			return store.Query{}, filter.Plan{}, &usageError{err}
		}
		text = c.String()
	}
	f, err := filter.Parse(text)
	if err != nil {
		return store.Query{}, filter.Plan{}, usagef("--filter: %s", filterMsg(err))
	}
	if q.pageSize < 0 || q.pageSize > 1000 {
		return store.Query{}, filter.Plan{}, usagef("--page-size %d: use 1 to 1000 (0: the service's maximum)", q.pageSize)
	}
	if q.top < 0 {
		return store.Query{}, filter.Plan{}, usagef("--top %d: must be positive", q.top)
	}
	return store.Query{Filter: text, Select: splitList(q.sel), Top: q.pageSize}, f.Plan(), nil
}

var offsetRE = regexp.MustCompile(`at offset (\d+)`)

// caret shows where in the filter the parser stopped.
func caret(text string, err error) string {
	m := offsetRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	off, _ := strconv.Atoi(m[1])
	if off > len(text) {
		off = len(text)
	}
	return "\n  " + text + "\n  " + strings.Repeat(" ", len([]rune(text[:off]))) + "^"
}

// filterMsg shortens the parser's message for a person: the position and
// the rule.
func filterMsg(err error) string {
	var se *store.Error
	if errors.As(err, &se) {
		return strings.TrimPrefix(se.Message, "$filter: ")
	}
	return err.Error()
}

func planText(p filter.Plan) (string, []string) {
	var ranges []string
	for _, r := range p.Ranges {
		ranges = append(ranges, rangeText(r))
	}
	return p.Kind.String(), ranges
}

func boundText(lo, hi filter.Bound) string {
	if !lo.Unbounded && !hi.Unbounded && lo.Inclusive && hi.Inclusive && lo.Value == hi.Value {
		return fmt.Sprintf("= %q", lo.Value)
	}
	l, h := "(-inf", "+inf)"
	if !lo.Unbounded {
		b := "("
		if lo.Inclusive {
			b = "["
		}
		l = b + fmt.Sprintf("%q", lo.Value)
	}
	if !hi.Unbounded {
		b := ")"
		if hi.Inclusive {
			b = "]"
		}
		h = fmt.Sprintf("%q", hi.Value) + b
	}
	return l + ", " + h
}

func rangeText(r filter.KeyRange) string {
	return "PartitionKey " + boundText(r.PKLow, r.PKHigh) + "; RowKey " + boundText(r.RKLow, r.RKHigh)
}

func (a *app) printPlan(format string, p filter.Plan, filterText string) error {
	kind, ranges := planText(p)
	rows := [][]any{}
	for _, r := range ranges {
		rows = append(rows, []any{kind, r})
	}
	if len(ranges) == 0 {
		rows = append(rows, []any{kind, "(none: the filter matches nothing)"})
	}
	return printRows(format, a.env.Stdout, []string{"plan", "range"}, rows)
}

// scanGuard refuses a whole-table scan without --scan.
func scanGuard(p filter.Plan, scan bool, cmd string) error {
	if p.Kind == filter.TableScan && !scan {
		return usagef("this %s reads the whole table (plan: table scan): add --scan to run it, or narrow it with a PartitionKey condition (--filter, --from-pk/--to-pk)", cmd)
	}
	return nil
}

func (a *app) queryCmd() *cobra.Command {
	var q queryFlags
	c := &cobra.Command{Use: "query TABLE", Short: "Query entities with a $filter", Args: nArgs(1, 1),
		Example: `  tablekit query Orders --filter "PartitionKey eq 'cust-17' and Total gt 100.0"
  tablekit query Orders --filter "PartitionKey eq 'cust-17'" --select Total --top 10
  tablekit query Orders --filter "Total gt 100.0" --plan
  tablekit query Orders --scan -o csv`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			query, plan, err := q.build()
			if err != nil {
				return err
			}
			if q.showPlan {
				return a.printPlan(format, plan, query.Filter)
			}
			if err := scanGuard(plan, q.scan, "query"); err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			out := newEntityOut(format, a.env.Stdout)
			n := 0
			for e, err := range store.All(cmd.Context(), cn.st.Table(args[0]), query) {
				if err != nil {
					out.close()
					return err
				}
				if err := out.add(e); err != nil {
					return err
				}
				n++
				if q.top > 0 && n >= q.top {
					break
				}
			}
			return out.close()
		}}
	q.register(c, true)
	c.Flags().IntVar(&q.top, "top", 0, "at most this many entities in all (0: all)")
	c.Flags().IntVar(&q.pageSize, "page-size", 0, "entities a request, 1 to 1000 (0: the service's maximum)")
	c.Flags().BoolVar(&q.showPlan, "plan", false, "print the query plan (point query, row range, partition scan, partition range, table scan) and do not run it")
	c.Flags().BoolVar(&q.scan, "scan", false, "allow a query that reads the whole table")
	return c
}

func (a *app) countCmd() *cobra.Command {
	var q queryFlags
	var byPartition bool
	c := &cobra.Command{Use: "count TABLE", Short: "Count entities (all, or those a $filter selects)", Args: nArgs(1, 1),
		Example: "  tablekit count Orders --scan\n  tablekit count Orders --filter \"PartitionKey eq 'cust-17'\"\n  tablekit count Orders --scan --by-partition",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			query, plan, err := q.build()
			if err != nil {
				return err
			}
			if err := scanGuard(plan, q.scan, "count"); err != nil {
				return err
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			query.Select = []string{"PartitionKey"}
			total := 0
			var parts []string
			per := map[string]int{}
			for e, err := range store.All(cmd.Context(), cn.st.Table(args[0]), query) {
				if err != nil {
					return err
				}
				total++
				if _, ok := per[e.PartitionKey]; !ok {
					parts = append(parts, e.PartitionKey)
				}
				per[e.PartitionKey]++
			}
			if byPartition {
				rows := make([][]any, len(parts))
				for i, p := range parts {
					rows[i] = []any{p, per[p]}
				}
				return printRows(format, a.env.Stdout, []string{"pk", "count"}, rows)
			}
			return printRows(format, a.env.Stdout, []string{"table", "count", "partitions"}, [][]any{{args[0], total, len(parts)}})
		}}
	q.register(c, false)
	c.Flags().BoolVar(&q.scan, "scan", false, "allow a count that reads the whole table")
	c.Flags().BoolVar(&byPartition, "by-partition", false, "one count per partition")
	return c
}
