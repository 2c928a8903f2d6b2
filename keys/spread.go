package keys

import (
	"fmt"
	"hash/fnv"
)

// MaxSpread is the largest bucket count [Spread] accepts. A reader must
// visit every bucket, so more than this many is never a good design.
const MaxSpread = 10000

// Spread returns the spread bucket of key among n: the 32-bit FNV-1a hash
// of key's UTF-8 bytes modulo n, zero-padded to the width of n-1 ("07"
// of 16). Prefix a PartitionKey with it to spread an append-only stream
// (the guide's prepend/append anti-pattern) over n partitions:
//
//	b, _ := keys.Spread(deviceID, 16)
//	pk := b + "_" + hourBucket
//
// The hash is fixed by its definition (offset basis 2166136261, prime
// 16777619), so the same key maps to the same bucket on every platform,
// in every version of this package, and in any other language that
// implements FNV-1a; this must never change, or existing rows are lost
// to readers. Buckets sort in numeric order. A reader visits every bucket
// in [SpreadBuckets]. It fails with [ErrOutOfRange] unless 1 <= n <=
// [MaxSpread].
func Spread(key string, n int) (string, error) {
	if err := checkSpread(n); err != nil {
		return "", err
	}
	h := fnv.New32a()
	h.Write([]byte(key)) // never fails
	return spreadLabel(int(h.Sum32()%uint32(n)), n), nil
}

// SpreadBuckets lists, in order, all n bucket prefixes [Spread] can
// return: the partitions a reader must visit to see the whole stream.
// It fails like Spread.
func SpreadBuckets(n int) ([]string, error) {
	if err := checkSpread(n); err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = spreadLabel(i, n)
	}
	return out, nil
}

func checkSpread(n int) error {
	if n < 1 || n > MaxSpread {
		return fmt.Errorf("%w: %d spread buckets, want 1 to %d", ErrOutOfRange, n, MaxSpread)
	}
	return nil
}

// spreadLabel pads bucket i to the digit count of n-1, so all labels of
// one n have the same width and sort numerically.
func spreadLabel(i, n int) string {
	width := 1
	for m := n - 1; m >= 10; m /= 10 {
		width++
	}
	return string(appendDigits(make([]byte, 0, width), i, width))
}
