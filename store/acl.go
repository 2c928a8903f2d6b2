package store

import (
	"context"
	"time"
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
