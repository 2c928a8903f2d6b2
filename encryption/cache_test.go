package encryption

import (
	"bytes"
	"context"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// countingKey counts the unwraps of the key it wraps.
type countingKey struct {
	KeyWrapper
	unwraps atomic.Int64
}

func (k *countingKey) UnwrapKey(ctx context.Context, wrapped []byte, alg, keyID string) ([]byte, error) {
	k.unwraps.Add(1)
	return k.KeyWrapper.UnwrapKey(ctx, wrapped, alg, keyID)
}

func TestKeyCacheSparesUnwraps(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		size, want int64
	}{{0, 1}, {-1, 20}, {1, 1}} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			ms := memstore.New()
			if err := ms.CreateTable(ctx, "Tkc"); err != nil {
				t.Fatal(err)
			}
			k := &countingKey{KeyWrapper: testKey(t, "k", 1)}
			enc, err := NewTable(ms.Table("Tkc"), Config{Key: k, Properties: []string{"S"}, KeyCacheSize: int(tc.size)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": secret}}); err != nil {
				t.Fatal(err)
			}
			for range 20 {
				e, err := enc.Get(ctx, "p", "r", nil)
				if err != nil || e.Properties["S"] != secret {
					t.Fatalf("Get = %v, %v", e.Properties, err)
				}
			}
			if got := k.unwraps.Load(); got != tc.want {
				t.Fatalf("%d unwraps for 20 reads, want %d", got, tc.want)
			}
		})
	}
}

func TestKeyCacheBoundedLRU(t *testing.T) {
	c := newKeyCache(3)
	aeads := make([]cipher.AEAD, 5)
	for i := range aeads {
		a, err := newGCM(bytes.Repeat([]byte{byte(i)}, 32))
		if err != nil {
			t.Fatal(err)
		}
		aeads[i] = a
	}
	key := func(i int) []byte { return cacheKey(nil, "k", "A256KW", []byte{byte(i)}) }
	for i := range 3 {
		c.put(key(i), aeads[i])
	}
	if c.get(key(0)) != aeads[0] { // 0 is now the most recent
		t.Fatal("entry 0 missing")
	}
	c.put(key(3), aeads[3]) // evicts 1, the least recently used
	if c.get(key(1)) != nil || c.get(key(0)) == nil || c.get(key(2)) == nil || c.get(key(3)) == nil {
		t.Fatal("wrong entry evicted")
	}
	if n := c.len(); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
	// the key id and the algorithm are part of the key
	if c.get(cacheKey(nil, "k2", "A256KW", []byte{0})) != nil || c.get(cacheKey(nil, "k", "A128KW", []byte{0})) != nil {
		t.Fatal("an entry matched another key id or algorithm")
	}
	c.clear()
	if c.len() != 0 || c.get(key(0)) != nil {
		t.Fatal("clear left entries")
	}
}

func TestKeyCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	if err := ms.CreateTable(ctx, "Tkc"); err != nil {
		t.Fatal(err)
	}
	enc, err := NewTable(ms.Table("Tkc"), Config{Key: testKey(t, "k", 1), Properties: []string{"S"}, KeyCacheSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if _, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"S": fmt.Sprint("v", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				i := (g*7 + j) % 16
				e, err := enc.Get(ctx, "p", fmt.Sprint(i), nil)
				if err == nil && e.Properties["S"] != fmt.Sprint("v", i) {
					err = fmt.Errorf("row %d read %v", i, e.Properties["S"])
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestMetadataScanMatchesJSON(t *testing.T) {
	wk := []byte{0, 1, 2, 3, 250, 251, 252, 253, 254, 255, 9}
	canon := string(appendMetadata(nil, &metadata{V: 1, Enc: encGCM, KeyID: "kek-1", Alg: AlgA256KW, WK: wk, Props: []string{"A", "Bb"}}))
	b64 := base64.StdEncoding.EncodeToString(wk)
	docs := []string{
		canon,
		string(appendMetadata(nil, &metadata{V: 1, Enc: encGCM, KeyID: "k", Alg: "A", WK: wk[:1]})),
		string(appendMetadata(nil, &metadata{V: 1, Enc: encGCM, KeyID: "k", Alg: "A", WK: wk[:2], Props: []string{"x"}})),
		string(appendMetadata(nil, &metadata{V: 1, Enc: encGCM, KeyID: `k"é\`, Alg: "A", WK: wk[:3]})),
		`{"v":1, "enc":"A256GCM","kid":"k","alg":"A","wk":"` + b64 + `","p":[]}`,
		`{"p":["A"],"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"` + b64 + `"}`,
		`{"v":1,"enc":"A256GCM","kid":"k\u0041","alg":"A","wk":"` + b64 + `","p":[]}`,
		`{"v":2,"enc":"A256GCM","kid":"k","alg":"A","wk":"` + b64 + `","p":[]}`,
		`{"v":01,"enc":"A256GCM","kid":"k","alg":"A","wk":"` + b64 + `","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAE=","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAF=","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AA==","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"A===","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAA","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"","p":[]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAAA","p":["a",]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAAA","p":["a""b"]}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAAA","p":[]}x`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAAA","p":[]`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AAAA","p":null}`,
		`{"v":1,"enc":"A256GCM","kid":"k","alg":"A","wk":"AA=A","p":[]}`,
		``, `{`, `null`,
	}
	if !new(metadata).scan(docs[0], nil, nil) || !new(metadata).scan(docs[1], nil, nil) {
		t.Fatal("the scanner refuses the metadata appendMetadata writes")
	}
	for _, s := range docs {
		var fast metadata
		fastErr := fast.parse(s, nil)
		var slow metadata
		var slowErr error
		if err := json.Unmarshal([]byte(s), &slow); err != nil {
			slowErr = errors.New("metadata is not valid JSON")
		} else {
			slowErr = slow.check()
		}
		if (fastErr == nil) != (slowErr == nil) {
			t.Errorf("%s: parse error %v, encoding/json %v", s, fastErr, slowErr)
			continue
		}
		if fastErr != nil {
			continue
		}
		if len(fast.Props) == 0 {
			fast.Props = nil
		}
		if len(slow.Props) == 0 {
			slow.Props = nil
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: parse %+v, encoding/json %+v", s, fast, slow)
		}
	}
}

func BenchmarkParseMetadata(b *testing.B) {
	s := string(appendMetadata(nil, &metadata{V: 1, Enc: encGCM, KeyID: "kek-1", Alg: AlgA256KW, WK: make([]byte, 40), Props: []string{"Email", "Name", "Phone"}}))
	var m metadata
	var wk []byte
	b.ReportAllocs()
	for b.Loop() {
		if err := m.parse(s, wk); err != nil {
			b.Fatal(err)
		}
		wk = m.WK[:0]
	}
}
