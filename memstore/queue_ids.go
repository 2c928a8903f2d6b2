package memstore

import (
	"encoding/base64"
	"encoding/binary"

	"github.com/tablekit/tablekit/store"
)

// mix64 is the SplitMix64 finalizer: a bijection on uint64 that scatters
// consecutive counters. Message IDs and pop receipts derive from counters
// through it, so they look random, never repeat (distinct counters give
// distinct first halves) and need no random source, which keeps runs
// repeatable.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// messageID formats the n-th message ID of a queue service as a GUID, the
// form Azure's message IDs take.
func messageID(n uint64) string {
	var g store.GUID
	binary.BigEndian.PutUint64(g[0:8], mix64(n))
	binary.BigEndian.PutUint64(g[8:16], mix64(^n))
	return g.String()
}

// receiptLen is the decoded length of a pop receipt.
const receiptLen = 16

// popReceipt formats the n-th pop receipt of a queue service: 16 bytes in
// base64, opaque to callers, like the service's.
func popReceipt(n uint64) string {
	var b [receiptLen]byte
	binary.BigEndian.PutUint64(b[0:8], mix64(n))
	binary.BigEndian.PutUint64(b[8:16], mix64(n^0x5bd1e9955bd1e995))
	return base64.StdEncoding.EncodeToString(b[:])
}

// checkReceipt refuses a pop receipt that is not of the service's format:
// Azure answers InvalidQueryParameterValue ("invalid receipt format") for
// one, and PopReceiptMismatch only for a well-formed receipt that is not
// the message's latest.
func checkReceipt(r string) error {
	b, err := base64.StdEncoding.DecodeString(r)
	if err != nil || len(b) != receiptLen {
		return store.Errorf(store.CodeInvalidQueryParameterValue, 400,
			"pop receipt %q is malformed: pass the PopReceipt of the latest Get or Update", clip(r))
	}
	return nil
}
