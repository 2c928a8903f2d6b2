package store

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a table's stored access policies.
const (
	// MaxAccessPolicies is how many stored access policies a table holds.
	MaxAccessPolicies = 5
	// MaxAccessPolicyIDLength is the longest policy id, in characters.
	MaxAccessPolicyIDLength = 64
)

// CodeAuthorizationFailure and the other codes below are the service's
// answers (403) to a request whose shared access signature is valid but
// does not allow it.
const (
	// CodeAuthorizationFailure: the token does not cover the resource (another
	// table, a key outside its range, an operation a table SAS cannot do).
	CodeAuthorizationFailure = "AuthorizationFailure"
	// CodeAuthorizationPermissionMismatch: the token lacks the permission
	// the operation needs.
	CodeAuthorizationPermissionMismatch = "AuthorizationPermissionMismatch"
	// CodeAuthorizationSourceIPMismatch: the caller's address is outside the
	// token's sip.
	CodeAuthorizationSourceIPMismatch = "AuthorizationSourceIPMismatch"
	// CodeAuthorizationProtocolMismatch: the token allows HTTPS only.
	CodeAuthorizationProtocolMismatch = "AuthorizationProtocolMismatch"
	// CodeAuthorizationServiceMismatch: an account SAS without the service.
	CodeAuthorizationServiceMismatch = "AuthorizationServiceMismatch"
	// CodeAuthorizationResourceTypeMismatch: an account SAS without the
	// resource type (srt) the operation needs.
	CodeAuthorizationResourceTypeMismatch = "AuthorizationResourceTypeMismatch"
)

// AccessPolicy is a stored access policy of a table: the fields a table
// SAS naming it (si) leaves out. A zero field is not set; a token must
// then carry it itself.
type AccessPolicy struct {
	// Start is when tokens naming the policy become valid.
	Start time.Time
	// Expiry is when they stop being valid.
	Expiry time.Time
	// Permission is a subset of "raud" (query, add, update, delete).
	Permission string
}

// SignedIdentifier is one stored access policy and its id, the si of the
// tokens that name it.
type SignedIdentifier struct {
	// ID is 1 to 64 characters, unique in the table.
	ID string
	// Policy holds the fields the tokens take from the policy.
	Policy AccessPolicy
}

// ACLStore is implemented by a Store that reads and replaces the stored
// access policies of a table (memstore, azstore). Deleting a policy, or
// replacing the list without it, revokes every token that names it.
type ACLStore interface {
	// GetAccessPolicy returns the table's stored access policies.
	GetAccessPolicy(ctx context.Context, table string) ([]SignedIdentifier, error)
	// SetAccessPolicy replaces the table's stored access policies with
	// ids: at most MaxAccessPolicies, each id at most
	// MaxAccessPolicyIDLength characters; nil removes them all.
	SetAccessPolicy(ctx context.Context, table string, ids []SignedIdentifier) error
}

// ValidateAccessPolicies checks a table's stored access policies as the
// service does: at most 5, ids of 1 to 64 characters and unique,
// permissions among r, a, u and d, and an expiry after the start. It
// returns a copy whose permissions are in the service's order ("raud").
func ValidateAccessPolicies(ids []SignedIdentifier) ([]SignedIdentifier, error) {
	if len(ids) > MaxAccessPolicies {
		return nil, invalid("%d stored access policies: a table holds at most %d", len(ids), MaxAccessPolicies)
	}
	out := make([]SignedIdentifier, len(ids))
	for i, id := range ids {
		n := utf8.RuneCountInString(id.ID)
		if n == 0 || n > MaxAccessPolicyIDLength {
			return nil, invalid("stored access policy %d: id %s is %d characters long: the length must be 1 to %d", i, quoteTrunc(id.ID), n, MaxAccessPolicyIDLength)
		}
		for j := range i {
			if ids[j].ID == id.ID {
				return nil, invalid("stored access policy id %q appears twice", id.ID)
			}
		}
		perm, err := NormalizeTablePermission(id.Policy.Permission)
		if err != nil {
			return nil, invalid("stored access policy %q: %s", id.ID, err.(*Error).Message)
		}
		p := id.Policy
		if !p.Start.IsZero() && !p.Expiry.IsZero() && !p.Expiry.After(p.Start) {
			return nil, invalid("stored access policy %q: expiry %s is not after start %s", id.ID,
				p.Expiry.UTC().Format(time.RFC3339), p.Start.UTC().Format(time.RFC3339))
		}
		p.Permission = perm
		out[i] = SignedIdentifier{ID: id.ID, Policy: p}
	}
	return out, nil
}

// NormalizeTablePermission checks the permission letters of a table SAS or
// stored access policy (r query, a add, u update, d delete) and returns
// them in the service's order, "raud". An unknown letter is refused,
// named.
func NormalizeTablePermission(s string) (string, error) {
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
