package encryption

import (
	"context"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// Store returns st with the tables named wrapped by c (see NewTable), or
// every table when no name is given; table names match in any letter
// case, as the service's do. Queues and containers pass unchanged. The
// result is a store.ACLStore exactly when st is one. Hand it to
// mapper.NewRepository, or to a pattern that takes a store.Store, to
// encrypt through them: a pattern that copies a property to another
// table or row through this store writes the copy encrypted again, bound
// to its new place.
func (c *Codec) Store(st store.Store, tables ...string) store.Store {
	s := &encStore{Store: st, c: c, tables: tables}
	if acl, ok := st.(store.ACLStore); ok {
		return &encACLStore{s, acl}
	}
	return s
}

type encStore struct {
	store.Store
	c      *Codec
	tables []string
}

func (s *encStore) Table(name string) store.Table {
	t := s.Store.Table(name)
	if len(s.tables) == 0 {
		return s.c.Table(t)
	}
	for _, n := range s.tables {
		if strings.EqualFold(n, name) {
			return s.c.Table(t)
		}
	}
	return t
}

type encACLStore struct {
	*encStore
	acl store.ACLStore
}

func (s *encACLStore) GetAccessPolicy(ctx context.Context, table string) ([]store.SignedIdentifier, error) {
	return s.acl.GetAccessPolicy(ctx, table)
}

func (s *encACLStore) SetAccessPolicy(ctx context.Context, table string, ids []store.SignedIdentifier) error {
	return s.acl.SetAccessPolicy(ctx, table, ids)
}
