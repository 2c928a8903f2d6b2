package azstore

import (
	"context"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// once returns ctx with the retry policy of non-idempotent writes.
func (s *Store) once(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, s.writeRetry)
}

// CreateTable implements store.Store. A create is retried only when the
// service refused it outright: a replay after a lost response would
// report TableAlreadyExists for the caller's own table.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := store.ValidateTableName(name); err != nil {
		return err
	}
	if s.tables == nil {
		return errNoEndpoint("table")
	}
	_, err = s.tables.CreateTable(s.once(ctx), name, nil)
	return azbase.Classify(ctx, err, "create table "+quote(name), true)
}

// CreateTableIfNotExists implements store.Store.
func (s *Store) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	err := s.CreateTable(ctx, name)
	if store.Code(err) == store.CodeTableAlreadyExists {
		return false, nil
	}
	return err == nil, err
}

// DeleteTable implements store.Store.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := store.ValidateTableName(name); err != nil {
		return err
	}
	if s.tables == nil {
		return errNoEndpoint("table")
	}
	_, err = s.tables.DeleteTable(s.once(ctx), name, nil)
	return azbase.Classify(ctx, err, "delete table "+quote(name), true)
}

const tableTokenPrefix = "tkat1."

// tableScope binds a table token to the listing's name prefix.
func tableScope(prefix string) uint64 { return driver.TokenScope("", prefix) }

// ListTables implements store.Store: one page of table names, through the
// service's NextTableName continuation wrapped in an opaque token.
func (s *Store) ListTables(ctx context.Context, opts store.ListTablesOptions) (store.TablePage, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return store.TablePage{}, err
	}
	if err := store.ValidateTop(opts.Top); err != nil {
		return store.TablePage{}, err
	}
	var next *string
	if opts.Continuation != "" {
		parts, err := driver.OpenToken(opts.Continuation, tableTokenPrefix, tableScope(opts.Prefix), 1)
		if err != nil {
			return store.TablePage{}, err
		}
		next = to.Ptr(parts[0])
	}
	if s.tables == nil {
		return store.TablePage{}, errNoEndpoint("table")
	}
	lo := &aztables.ListTablesOptions{NextTableName: next}
	if opts.Top > 0 {
		lo.Top = to.Ptr(int32(opts.Top))
	}
	if opts.Prefix != "" {
		f := filter.Prop("TableName").HasPrefix(opts.Prefix)
		if err := f.Err(); err != nil {
			return store.TablePage{}, err
		}
		lo.Filter = to.Ptr(f.String())
	}
	pager := s.tables.NewListTablesPager(lo)
	resp, err := pager.NextPage(ctx)
	if err != nil {
		return store.TablePage{}, azbase.Classify(ctx, err, "list tables", false)
	}
	var page store.TablePage
	for _, t := range resp.Tables {
		if t != nil && t.Name != nil && strings.HasPrefix(*t.Name, opts.Prefix) {
			page.Tables = append(page.Tables, store.TableInfo{Name: *t.Name})
		}
	}
	if resp.NextTableName != nil && *resp.NextTableName != "" {
		page.Continuation = driver.SealToken(tableTokenPrefix, tableScope(opts.Prefix), *resp.NextTableName)
	}
	return page, nil
}

// quote and quoteTrunc quote a name or key for a message.
func quote(s string) string      { return azbase.Quote(s) }
func quoteTrunc(s string) string { return azbase.Quote(s) }
