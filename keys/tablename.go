package keys

import (
	"fmt"
	"strings"
	"time"
)

// maxTableName is the service's longest table name. The shortest, 3, needs
// no check: a one-letter prefix and the shortest bucket make 7.
const maxTableName = 63

// TableName returns prefix followed by the [Bucket] of t, a legal table
// name per period for the guide's high-volume delete pattern: write each
// period's entities to their own table and delete old data by deleting
// a whole table. TableName("Logins", t, Day) gives "Logins20261122".
//
// The prefix must start with an ASCII letter and contain only ASCII
// letters and digits, and leave room for the bucket within 63
// characters (57 for Month, 51 for Minute); otherwise TableName fails
// with [ErrInvalidTableName]. A bad time fails as in Bucket.
func TableName(prefix string, t time.Time, g Granularity) (string, error) {
	if err := checkTablePrefix(prefix, g); err != nil {
		return "", err
	}
	b, err := Bucket(t, g)
	if err != nil {
		return "", err
	}
	return prefix + b, nil
}

// ParseTableName reverses [TableName]: it returns the UTC start of the
// period a table holds. The prefix matches case-insensitively, as the
// service compares table names. Use it to find the tables a retention
// job must delete. It fails with [ErrMalformed] for a name that is not
// prefix followed by a bucket of granularity g.
func ParseTableName(prefix, name string, g Granularity) (time.Time, error) {
	if err := checkTablePrefix(prefix, g); err != nil {
		return time.Time{}, err
	}
	if len(name) < len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) {
		return time.Time{}, fmt.Errorf("%w: table %s does not start with prefix %q", ErrMalformed, quote(name), prefix)
	}
	return ParseBucket(name[len(prefix):], g)
}

// TableNames lists the table of every period from the one holding from
// to the one holding to, both included, in time order. It fails like
// [TableName] and [Buckets].
func TableNames(prefix string, from, to time.Time, g Granularity) ([]string, error) {
	if err := checkTablePrefix(prefix, g); err != nil {
		return nil, err
	}
	bs, err := Buckets(from, to, g)
	if err != nil {
		return nil, err
	}
	for i, b := range bs {
		bs[i] = prefix + b
	}
	return bs, nil
}

// checkTablePrefix checks that prefix plus a bucket of g is a legal table
// name. The bucket supplies only digits, so the prefix carries the
// leading letter, and the name cannot be the reserved "tables".
func checkTablePrefix(prefix string, g Granularity) error {
	if err := g.check(); err != nil {
		return err
	}
	if prefix == "" {
		return fmt.Errorf("%w: empty table name prefix: a table name must start with a letter", ErrInvalidTableName)
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		letter := (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return fmt.Errorf("%w: table name prefix %s has %q at offset %d: a table name is a letter followed by letters and digits",
				ErrInvalidTableName, quote(prefix), c, i)
		}
	}
	if n := len(prefix) + g.digits(); n > maxTableName {
		return fmt.Errorf("%w: table name prefix %q is %d characters long: with a %d-digit %s bucket the name would be %d, the limit is %d",
			ErrInvalidTableName, prefix, len(prefix), g.digits(), g, n, maxTableName)
	}
	return nil
}
