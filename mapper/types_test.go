package mapper

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Level is a named integer type.
type Level int16

// Tag is a named string type.
type Tag string

// Blob is a named []byte type.
type Blob []byte

// UUID is a named [16]byte type, as uuid packages define it.
type UUID [16]byte

// Flag is a named bool type.
type Flag bool

// Ratio is a named float32 type.
type Ratio float32

// Count is a named uint32 type (stored as Int64).
type Count uint32

// Date is a type defined from time.Time: it has time.Time's layout but
// none of its methods.
type Date time.Time

// Point is stored through encoding.TextMarshaler as "x;y".
type Point struct{ X, Y int }

func (p Point) MarshalText() ([]byte, error) { return fmt.Appendf(nil, "%d;%d", p.X, p.Y), nil }

func (p *Point) UnmarshalText(b []byte) error {
	x, y, ok := strings.Cut(string(b), ";")
	if !ok {
		return fmt.Errorf("point %q: want x;y", b)
	}
	var err1, err2 error
	p.X, err1 = strconv.Atoi(x)
	p.Y, err2 = strconv.Atoi(y)
	return errors.Join(err1, err2)
}

// Money encodes itself as an Int64 count of cents.
type Money struct{ Cents int64 }

func (m Money) MarshalTableProperty() (any, error) { return m.Cents, nil }

func (m *Money) UnmarshalTableProperty(v any) error {
	switch x := v.(type) {
	case int64:
		m.Cents = x
	case int32:
		m.Cents = int64(x)
	default:
		return fmt.Errorf("money: want an integer, got %T", v)
	}
	return nil
}

// Nested is stored as JSON.
type Nested struct {
	Name  string
	Items []int
}

// Base is embedded by value.
type Base struct {
	Created time.Time
	Owner   string
}

// Extra is embedded by pointer.
type Extra struct {
	Note  string
	Score *int64
}

// AllTypes has a field of every supported kind.
type AllTypes struct {
	PK   string     `table:",pk"`
	RK   string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	When time.Time  `table:",timestamp"`

	S   string
	B   bool
	I   int
	I8  int8
	I16 int16
	I32 int32
	I64 int64
	U8  uint8
	U16 uint16
	U32 uint32
	U64 uint64
	U   uint
	F32 float32
	F64 float64
	T   time.Time
	Bin []byte
	G   store.GUID
	A16 [16]byte

	PS   *string
	PB   *bool
	PI   *int
	PI32 *int32
	PU64 *uint64
	PF   *float64
	PT   *time.Time
	PBin *[]byte
	PG   *store.GUID

	NS   Tag
	NL   Level
	NB   Blob
	NU   UUID
	ND   Date
	NBo  Flag
	NF   Ratio
	NC   Count
	UP   uintptr
	PND  *Date
	Txt  Point
	PTxt *Point
	Cust Money
	PC   *Money

	J  Nested         `table:",json"`
	JM map[string]int `table:"JMap,json"`
	JS []string       `table:",json,omitempty"`
	JP *Nested        `table:",json"`

	Base
	*Extra
}
