package mapper

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

type badText struct{ fail bool }

func (b badText) MarshalText() ([]byte, error) {
	if b.fail {
		return nil, errors.New("boom-text")
	}
	return nil, nil
}
func (*badText) UnmarshalText([]byte) error { return nil }

type customAny struct{ v any }

func (c customAny) MarshalTableProperty() (any, error) {
	if err, ok := c.v.(error); ok {
		return nil, err
	}
	return c.v, nil
}
func (c *customAny) UnmarshalTableProperty(v any) error { c.v = v; return nil }

type refusals struct {
	PK   string `table:",pk"`
	RK   string `table:",rk"`
	U64  uint64
	U    uint
	T    time.Time
	PT   *time.Time
	S    string
	Bin  []byte
	J    map[string]string `table:",json"`
	JA   any               `table:",json"`
	Txt  badText
	Cust customAny
}

// Every value the mapper refuses to store fails, on both encoders, with a
// *mapper.Error naming the field, the value and the limit.
func TestEncodeRefusesValues(t *testing.T) {
	before := time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)
	after := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		v     refusals
		field string
		want  []string
		is    error
	}{
		{"uint64 over MaxInt64", refusals{U64: math.MaxInt64 + 1}, "U64", []string{"9223372036854775808", "9223372036854775807"}, store.ErrInvalidInput},
		{"uint over MaxInt64", refusals{U: math.MaxUint64}, "U", []string{"18446744073709551615"}, store.ErrInvalidInput},
		{"time before 1601", refusals{T: before}, "T", []string{"1600-12-31T23:59:59Z", "1601-01-01"}, store.ErrInvalidInput},
		{"time after 9999", refusals{PT: &after}, "PT", []string{"10000-01-01", "9999-12-31"}, store.ErrInvalidInput},
		{"string too long", refusals{S: strings.Repeat("x", store.MaxStringUnits+1)}, "S", []string{"32768", "32767"}, store.ErrTooLarge},
		{"string too long in UTF-16", refusals{S: strings.Repeat("😀", store.MaxStringUnits/2+1)}, "S", []string{"32768 UTF-16"}, store.ErrTooLarge},
		{"binary too large", refusals{Bin: make([]byte, store.MaxBinaryBytes+1)}, "Bin", []string{"65537", "65536"}, store.ErrTooLarge},
		{"JSON too large", refusals{J: map[string]string{"k": strings.Repeat("y", store.MaxStringUnits)}}, "J", []string{"JSON", "32767", "blob"}, store.ErrTooLarge},
		{"JSON encode error", refusals{JA: make(chan int)}, "JA", []string{"JSON", "chan int"}, nil},
		{"MarshalText error", refusals{Txt: badText{true}}, "Txt", []string{"MarshalText", "boom-text"}, nil},
		{"MarshalTableProperty error", refusals{Cust: customAny{errors.New("boom-custom")}}, "Cust", []string{"boom-custom"}, nil},
		{"MarshalTableProperty type", refusals{Cust: customAny{uint16(3)}}, "Cust", []string{"uint16"}, nil},
		{"MarshalTableProperty range", refusals{Cust: customAny{before}}, "Cust", []string{"1600"}, store.ErrInvalidInput},
		{"MarshalTableProperty size", refusals{Cust: customAny{make([]byte, store.MaxBinaryBytes+1)}}, "Cust", []string{"65537"}, store.ErrTooLarge},
	}
	for _, c := range cases {
		c.v.Cust.v = orDefault(c.v.Cust.v)
		for enc, run := range map[string]func() error{
			"Encode":     func() error { _, err := Encode(&c.v); return err },
			"AppendJSON": func() error { _, err := AppendJSON(nil, &c.v); return err },
		} {
			err := run()
			var me *Error
			if !errors.As(err, &me) {
				t.Errorf("%s: %s: got %v, want *mapper.Error", c.name, enc, err)
				continue
			}
			if me.Field != c.field || me.Type != reflect.TypeFor[refusals]() {
				t.Errorf("%s: %s: error names %v.%s", c.name, enc, me.Type, me.Field)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %s: %q does not mention %q", c.name, enc, err, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%s: %s: %v does not match %v", c.name, enc, err, c.is)
			}
		}
	}
}

func orDefault(v any) any {
	if v == nil {
		return int32(0)
	}
	return v
}

// The largest values that fit are stored.
func TestEncodeAcceptsLimits(t *testing.T) {
	v := refusals{U64: math.MaxInt64, U: math.MaxInt64, T: store.MinTime, PT: &store.MaxTime,
		S: strings.Repeat("x", store.MaxStringUnits), Bin: make([]byte, store.MaxBinaryBytes), Cust: customAny{int32(1)}}
	type ok struct {
		PK  string `table:",pk"`
		RK  string `table:",rk"`
		U64 uint64
		U   uint
		T   time.Time
		PT  *time.Time
		S   string
		Bin []byte
	}
	w := ok{U64: v.U64, U: v.U, T: v.T, PT: v.PT, S: v.S, Bin: v.Bin}
	e, err := Encode(&w)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ValidateEntity(&e); err != nil {
		t.Fatalf("the store refuses what the mapper accepted: %v", err)
	}
	var back ok
	if err := Decode(e, &back); err != nil || !reflect.DeepEqual(back, w) {
		t.Fatalf("round trip at the limits: %v", err)
	}
}

// Times are stored in UTC truncated to the service's 100 ns.
func TestTimeNormalized(t *testing.T) {
	type timed struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		T  time.Time
	}
	in := time.Date(2024, 6, 1, 12, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	e, err := Encode(timed{T: in})
	if err != nil {
		t.Fatal(err)
	}
	got := e.Properties["T"].(time.Time)
	if got.Location() != time.UTC || got.Nanosecond() != 123456700 || got.Hour() != 10 {
		t.Fatalf("stored %v", got)
	}
}

// NaN round-trips as NaN (DeepEqual cannot compare it).
func TestNaN(t *testing.T) {
	type f struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		X  float64
		Y  float32
	}
	in := f{X: math.NaN(), Y: float32(math.NaN())}
	e, err := Encode(&in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := AppendJSON(nil, &in)
	if err != nil {
		t.Fatal(err)
	}
	var a, w f
	if err := Decode(e, &a); err != nil {
		t.Fatal(err)
	}
	if err := DecodeJSON(b, &w); err != nil {
		t.Fatal(err)
	}
	for _, v := range []f{a, w} {
		if !math.IsNaN(v.X) || !math.IsNaN(float64(v.Y)) {
			t.Fatalf("NaN came back as %v, %v", v.X, v.Y)
		}
	}
}
