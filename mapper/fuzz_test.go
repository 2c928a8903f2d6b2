package mapper

import (
	"bytes"
	"testing"
)

// FuzzDecodeJSON feeds arbitrary bytes to DecodeJSON: it must never panic,
// and whatever it accepts must encode and decode again to the same value.
func FuzzDecodeJSON(f *testing.F) {
	g := newGen(9)
	for range 8 {
		v := g.allTypes()
		b, err := AppendJSON(nil, &v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"I8":"300","I8@odata.type":"Edm.Int64","T":"0001-01-01T00:00:00Z","T@odata.type":"Edm.DateTime"}`))
	f.Add([]byte(`{"Bin":"!!","Bin@odata.type":"Edm.Binary","J":"{","PTxt":"1;x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v AllTypes
		if err := DecodeJSON(data, &v); err != nil {
			return
		}
		b, err := AppendJSON(nil, &v)
		if err != nil {
			// Accepted on read but refused on write: only values the
			// service would refuse too (a time outside its range).
			if _, encErr := Encode(&v); encErr == nil {
				t.Fatalf("AppendJSON refused what Encode accepts: %v", err)
			}
			return
		}
		var w AllTypes
		if err := DecodeJSON(b, &w); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, _ := AppendJSON(nil, &w)
		if !bytes.Equal(b, b2) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
	})
}
