package azstore

import (
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// emulatorEvaluates reports whether Azurite can be sent the filter. Query
// checks every entity the server returns with Match, which removes what a
// server matches too much: Azurite compares values of different types
// loosely (Int32 1 equals 1.0). Two of its errors make it match too little,
// which no check can restore, so such filters are evaluated by azstore
// alone (the query then reads the table unfiltered, in pages):
//   - a comparison under a not: a loose match inside is a miss outside
//     (not (A ne 1.0) drops an Int32 2);
//   - an ordering comparison of binary values: Azurite orders their base64
//     text, not their bytes (X'00' is not less than X'FF').
func emulatorEvaluates(f *filter.Filter) bool {
	ok := true
	f.EachComparison(func(c filter.Comparison) {
		if c.Negated || (c.Type == store.EdmBinary && c.Op != filter.Eq && c.Op != filter.Ne) {
			ok = false
		}
	})
	return ok
}

// emulatorFilter is the filter sent to Azurite for f: DateTime comparisons
// widened, because Azurite compares DateTime values (Timestamp included)
// at millisecond precision, JavaScript's, where the service uses 100 ns:
// two values in one millisecond are equal to it. So "gt" and "lt" would
// drop rows that differ below the millisecond and "ne" rows equal to it
// there; sent as "ge", "le" and no comparison at all they return a
// superset, which Match then cuts to the exact answer. ("eq", "ge" and
// "le" already return supersets.)
func emulatorFilter(f *filter.Filter) *filter.Filter {
	return f.Widen(func(c filter.Comparison) (filter.Op, bool) {
		if c.Type != store.EdmDateTime {
			return c.Op, true
		}
		switch c.Op {
		case filter.Gt:
			return filter.Ge, true
		case filter.Lt:
			return filter.Le, true
		case filter.Ne:
			return c.Op, false
		}
		return c.Op, true
	})
}
