package mapper

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// gen draws random values with a bias toward edge values. It is seeded, so
// a failure reproduces.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed*7+1))} }

func (g *gen) coin() bool { return g.r.IntN(2) == 0 }

// pick returns one of the edges a quarter of the time, else random().
func pick[T any](g *gen, edges []T, random func() T) T {
	if g.r.IntN(4) == 0 {
		return edges[g.r.IntN(len(edges))]
	}
	return random()
}

var runePool = []rune{'a', 'Z', '0', ' ', '\'', '"', '\\', '/', '\n', '\t', 0x01, 0x7f, 'é', 'ß', '日', '\u2028', '\uffff', 0x1F600, 0x10FFFF, '<', '&'}

func (g *gen) str(max int) string {
	n := pick(g, []int{0, 1, max}, func() int { return g.r.IntN(max + 1) })
	var b strings.Builder
	for range n {
		if g.coin() {
			b.WriteRune(runePool[g.r.IntN(len(runePool))])
		} else {
			b.WriteRune(rune(0x20 + g.r.IntN(0x5f)))
		}
	}
	return b.String()
}

// key draws a legal PartitionKey or RowKey.
func (g *gen) key() string {
	const alpha = "abcXYZ019-_.~ é日"
	rs := []rune(alpha)
	n := g.r.IntN(12)
	var b strings.Builder
	for range n {
		b.WriteRune(rs[g.r.IntN(len(rs))])
	}
	if g.r.IntN(10) == 0 {
		b.WriteRune(0x1F600)
	}
	return b.String()
}

func (g *gen) i64() int64 {
	return pick(g, []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1 << 53}, func() int64 {
		return int64(g.r.Uint64()) >> g.r.IntN(64)
	})
}

func (g *gen) u64() uint64 {
	return pick(g, []uint64{0, 1, math.MaxInt64}, func() uint64 { return g.r.Uint64() >> (1 + g.r.IntN(63)) })
}

func (g *gen) f64() float64 {
	return pick(g, []float64{0, math.Copysign(0, -1), 1, -1.5, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), 1e21, 1e-7, 0.1, 1 << 53}, func() float64 {
		return math.Float64frombits(g.r.Uint64()&^(0x7ff<<52) | uint64(g.r.IntN(0x7ff))<<52) // finite
	})
}

func (g *gen) f32() float32 {
	return pick(g, []float32{0, 1, -1, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1))}, func() float32 {
		return float32(g.f64()) // may overflow to ±Inf, which round-trips too
	})
}

// when draws an instant in the service's range at 100 ns precision, in UTC.
func (g *gen) when() time.Time {
	edges := []time.Time{store.MinTime, store.MaxTime, time.Unix(0, 0).UTC(), time.Date(2000, 2, 29, 23, 59, 59, 999999900, time.UTC)}
	return pick(g, edges, func() time.Time {
		// UnixNano overflows int64 outside 1678-2262: build from seconds.
		lo, hi := store.MinTime.Unix(), store.MaxTime.Unix()
		return time.Unix(lo+g.r.Int64N(hi-lo), g.r.Int64N(1e7)*100).UTC()
	})
}

func (g *gen) bytes(max int) []byte {
	if g.r.IntN(6) == 0 {
		return nil
	}
	n := pick(g, []int{0, 1, max}, func() int { return g.r.IntN(max + 1) })
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g *gen) guid() store.GUID {
	var x store.GUID
	if g.r.IntN(5) == 0 {
		return x
	}
	for i := range x {
		x[i] = byte(g.r.Uint32())
	}
	return x
}

func ptr[T any](g *gen, v T) *T {
	if g.r.IntN(3) == 0 {
		return nil
	}
	return &v
}

// allTypes draws a random AllTypes that round-trips exactly: times in UTC
// at 100 ns, no NaN, no pointer to a value that is not stored (a nil slice
// or the zero time), no empty non-nil slice under omitempty.
func (g *gen) allTypes() AllTypes {
	v := AllTypes{
		PK: g.key(), RK: g.key(),
		S: g.str(40), B: g.coin(),
		I:   int(g.i64()),
		I8:  int8(g.i64()),
		I16: int16(g.i64()),
		I32: int32(g.i64()),
		I64: g.i64(),
		U8:  uint8(g.u64()), U16: uint16(g.u64()), U32: uint32(g.u64()), U64: g.u64(), U: uint(g.u64()),
		F32: g.f32(), F64: g.f64(),
		Bin: g.bytes(64),
		G:   g.guid(), A16: [16]byte(g.guid()),
		PS: ptr(g, g.str(8)), PB: ptr(g, g.coin()), PI: ptr(g, int(g.i64())), PI32: ptr(g, int32(g.i64())),
		PU64: ptr(g, g.u64()), PF: ptr(g, g.f64()), PG: ptr(g, g.guid()),
		NS: Tag(g.str(10)), NL: Level(g.i64()), NB: Blob(g.bytes(10)), NU: UUID(g.guid()),
		NBo: Flag(g.coin()), NF: Ratio(g.f32()), NC: Count(g.u64()), UP: uintptr(g.u64()),
		Txt: Point{int(int32(g.i64())), int(int32(g.i64()))}, Cust: Money{g.i64()},
		J: Nested{Name: g.str(10)},
	}
	if g.coin() {
		v.T = g.when()
	}
	if g.coin() {
		v.ND = Date(g.when())
	}
	if g.coin() {
		d := Date(g.when())
		v.PND = &d
	}
	if g.coin() {
		t := g.when()
		v.PT = &t
	}
	if b := g.bytes(8); b != nil && g.coin() {
		v.PBin = &b
	}
	if g.coin() {
		v.PTxt = &Point{int(int32(g.i64())), 1}
	}
	if g.coin() {
		v.PC = &Money{g.i64()}
	}
	if g.coin() {
		v.J.Items = []int{int(int32(g.i64())), 0}
	}
	switch g.r.IntN(3) {
	case 1:
		v.JM = map[string]int{}
	case 2:
		v.JM = map[string]int{g.str(5): int(int32(g.i64()))}
	}
	if g.coin() {
		v.JS = []string{g.str(5), g.str(5)}
	}
	if g.coin() {
		v.JP = &Nested{Name: g.str(3), Items: []int{}}
	}
	if g.coin() {
		v.Created = g.when()
	}
	v.Owner = g.str(5)
	if g.coin() {
		v.Extra = &Extra{Note: g.str(5), Score: ptr(g, g.i64())}
	}
	return v
}
