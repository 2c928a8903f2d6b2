package azstore

import (
	"context"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

var _ store.ACLStore = (*Store)(nil)

// GetAccessPolicy implements store.ACLStore through aztables'
// Client.GetAccessPolicy.
func (s *Store) GetAccessPolicy(ctx context.Context, name string) ([]store.SignedIdentifier, error) {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := store.ValidateTableName(name); err != nil {
		return nil, err
	}
	if s.tables == nil {
		return nil, errNoEndpoint("table")
	}
	resp, err := s.tables.NewClient(name).GetAccessPolicy(ctx, nil)
	if err != nil {
		return nil, azbase.Classify(ctx, err, "get the access policies of table "+quote(name), false)
	}
	var out []store.SignedIdentifier
	for _, si := range resp.SignedIdentifiers {
		if si == nil || si.ID == nil {
			continue
		}
		id := store.SignedIdentifier{ID: *si.ID}
		if p := si.AccessPolicy; p != nil {
			id.Policy.Start = timeOf(p.Start)
			id.Policy.Expiry = timeOf(p.Expiry)
			if p.Permission != nil {
				id.Policy.Permission = *p.Permission
			}
		}
		out = append(out, id)
	}
	return out, nil
}

// SetAccessPolicy implements store.ACLStore through aztables'
// Client.SetAccessPolicy, after driver.ValidateAccessPolicies.
func (s *Store) SetAccessPolicy(ctx context.Context, name string, ids []store.SignedIdentifier) error {
	ctx, err := azbase.Begin(ctx)
	if err != nil {
		return err
	}
	if err := store.ValidateTableName(name); err != nil {
		return err
	}
	ids, err = driver.ValidateAccessPolicies(ids)
	if err != nil {
		return err
	}
	if s.tables == nil {
		return errNoEndpoint("table")
	}
	acl := make([]*aztables.SignedIdentifier, len(ids))
	for i, id := range ids {
		p := &aztables.AccessPolicy{}
		if !id.Policy.Start.IsZero() {
			p.Start = &ids[i].Policy.Start
		}
		if !id.Policy.Expiry.IsZero() {
			p.Expiry = &ids[i].Policy.Expiry
		}
		if id.Policy.Permission != "" {
			p.Permission = &ids[i].Policy.Permission
		}
		acl[i] = &aztables.SignedIdentifier{ID: &ids[i].ID, AccessPolicy: p}
	}
	_, err = s.tables.NewClient(name).SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: acl})
	return azbase.Classify(ctx, err, "set the access policies of table "+quote(name), true)
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
