package driver

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// ValidateAccessPolicies checks a table's stored access policies as the
// service does: at most store.MaxAccessPolicies, ids of 1 to
// store.MaxAccessPolicyIDLength characters and unique, permissions among
// r, a, u and d, and an expiry after the start. It returns a copy whose
// permissions are in the service's order ("raud").
func ValidateAccessPolicies(ids []store.SignedIdentifier) ([]store.SignedIdentifier, error) {
	if len(ids) > store.MaxAccessPolicies {
		return nil, invalid("%d stored access policies: a table holds at most %d", len(ids), store.MaxAccessPolicies)
	}
	out := make([]store.SignedIdentifier, len(ids))
	for i, id := range ids {
		n := utf8.RuneCountInString(id.ID)
		if n == 0 || n > store.MaxAccessPolicyIDLength {
			return nil, invalid("stored access policy %d: id %s is %d characters long: the length must be 1 to %d", i, quoteTrunc(id.ID), n, store.MaxAccessPolicyIDLength)
		}
		for j := range i {
			if ids[j].ID == id.ID {
				return nil, invalid("stored access policy id %q appears twice", id.ID)
			}
		}
		perm, err := normalizePermission(id.Policy.Permission)
		if err != nil {
			return nil, invalid("stored access policy %q: %s", id.ID, err.Message)
		}
		p := id.Policy
		if !p.Start.IsZero() && !p.Expiry.IsZero() && !p.Expiry.After(p.Start) {
			return nil, invalid("stored access policy %q: expiry %s is not after start %s", id.ID,
				p.Expiry.UTC().Format(time.RFC3339), p.Start.UTC().Format(time.RFC3339))
		}
		p.Permission = perm
		out[i] = store.SignedIdentifier{ID: id.ID, Policy: p}
	}
	return out, nil
}

// NormalizeTablePermission checks the permission letters of a table SAS or
// stored access policy (r query, a add, u update, d delete) and returns
// them in the service's order, "raud". An unknown letter is refused,
// named.
func NormalizeTablePermission(s string) (string, error) {
	perm, err := normalizePermission(s)
	if err != nil {
		return "", err
	}
	return perm, nil
}

// normalizePermission is NormalizeTablePermission with the refusal typed.
func normalizePermission(s string) (string, *store.Error) {
	var has [4]bool
	for i, c := range s {
		j := strings.IndexRune("raud", c)
		if j < 0 {
			return "", invalid("permission %q: letter %q at offset %d is not one of r (query), a (add), u (update), d (delete)", s, c, i)
		}
		has[j] = true
	}
	b := make([]byte, 0, 4)
	for j, ok := range has {
		if ok {
			b = append(b, "raud"[j])
		}
	}
	return string(b), nil
}
