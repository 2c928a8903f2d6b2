package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/store"
)

func (a *app) writeCmd(name string) *cobra.Command {
	var data, etag string
	var force bool
	short, example := "", ""
	switch name {
	case "put":
		short = "Write one entity whole: insert it, or replace it at its ETag (--etag), or insert-or-replace it (--force)"
		example = `  tablekit put Orders --data '{"PartitionKey":"cust-17","RowKey":"order-0042","Total@odata.type":"Edm.Double","Total":120.0}'
  tablekit put Orders --etag 'W/"datetime'"'"'2026-01-02T03:04:05.1234567Z'"'"'"' < order.json
  tablekit put Orders --force < order.json`
	case "merge":
		short = "Merge properties into one existing entity, at its ETag (--etag) or whatever its version (--force)"
		example = `  tablekit merge Orders --force --data '{"PartitionKey":"cust-17","RowKey":"order-0042","Status":"shipped"}'`
	}
	c := &cobra.Command{Use: name + " TABLE", Short: short, Args: nArgs(1, 1), Example: example,
		Long: short + `.

The entity is one JSON object with "@odata.type" annotations, from --data or
standard input. The ETag comes from --etag, else from the object's
"odata.etag"; the write is then conditional (If-Match): it fails with
UpdateConditionNotSatisfied when the entity changed since it was read.
--force writes whatever the stored version (If-Match *).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			if force && etag != "" {
				return usagef("give --etag or --force, not both")
			}
			body := []byte(data)
			if data == "" {
				if body, err = io.ReadAll(a.env.Stdin); err != nil {
					return err
				}
			}
			if strings.TrimSpace(string(body)) == "" {
				return usagef("%s needs the entity: --data JSON or a JSON object on standard input", name)
			}
			e, err := entityio.DecodeJSON(body)
			if err != nil {
				return usagef("the entity: %v", err)
			}
			if etag == "" {
				etag = string(e.ETag)
			}
			e.ETag, e.Timestamp = "", e.Timestamp.UTC()
			if err := store.ValidateEntity(&e); err != nil {
				return &usageError{err}
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			t := cn.st.Table(args[0])
			var newTag store.ETag
			what := ""
			switch {
			case name == "put" && force:
				newTag, err = t.Upsert(cmd.Context(), e, store.Replace)
				what = "upserted (insert or replace)"
			case name == "put" && etag == "":
				newTag, err = t.Insert(cmd.Context(), e)
				what = "inserted"
			case name == "put":
				newTag, err = t.Update(cmd.Context(), e, store.Replace, store.ETag(etag))
				what = "replaced"
			case force:
				newTag, err = t.Update(cmd.Context(), e, store.Merge, store.ETagAny)
				what = "merged"
			case etag == "":
				return usagef("merge needs --etag (the ETag you read) or --force")
			default:
				newTag, err = t.Update(cmd.Context(), e, store.Merge, store.ETag(etag))
				what = "merged"
			}
			if err != nil {
				return err
			}
			cn.dirty = true
			if err := cn.save(cmd.Context()); err != nil {
				return err
			}
			return printRows(format, a.env.Stdout, []string{"result", "pk", "rk", "etag"}, [][]any{{what, e.PartitionKey, e.RowKey, string(newTag)}})
		}}
	c.Flags().StringVar(&data, "data", "", "the entity as a JSON object (default: read standard input)")
	c.Flags().StringVar(&etag, "etag", "", "the ETag read: the write happens only if the entity is still at it")
	c.Flags().BoolVar(&force, "force", false, "write whatever the stored version (If-Match *)")
	return c
}

func (a *app) deleteCmd() *cobra.Command {
	var etag string
	var force bool
	c := &cobra.Command{Use: "delete TABLE PARTITIONKEY ROWKEY", Short: "Delete one entity at its ETag (--etag) or whatever its version (--force)", Args: nArgs(3, 3),
		Example: "  tablekit delete Orders cust-17 order-0042 --force",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := a.format()
			if err != nil {
				return err
			}
			switch {
			case force && etag != "":
				return usagef("give --etag or --force, not both")
			case force:
				etag = string(store.ETagAny)
			case etag == "":
				return usagef("delete needs --etag (the ETag you read) or --force")
			}
			cn, err := a.open(cmd.Context(), &a.src)
			if err != nil {
				return err
			}
			if err := cn.st.Table(args[0]).Delete(cmd.Context(), args[1], args[2], store.ETag(etag)); err != nil {
				return err
			}
			cn.dirty = true
			if err := cn.save(cmd.Context()); err != nil {
				return err
			}
			return printRows(format, a.env.Stdout, []string{"result", "pk", "rk"}, [][]any{{"deleted", args[1], args[2]}})
		}}
	c.Flags().StringVar(&etag, "etag", "", "the ETag read: delete only if the entity is still at it")
	c.Flags().BoolVar(&force, "force", false, "delete whatever the stored version (If-Match *)")
	return c
}
