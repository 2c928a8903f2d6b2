package encryption_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/intercept"
)

const (
	throughSecret = "ThroughSecret0xC0FFEE"
	batchSecret   = "BatchSecret0xBADF00D"
	bulkSecret    = "BulkSecret0xDEADBEEF"
	writerSecret  = "WriterSecret0xFEEDFACE"
)

// TestWritesThroughEncryption writes patients through every write path of
// the mapper and the store over an encrypting store: the repository's
// single writes, a Batch (a transaction), the repository's BulkWrite and
// a store.BulkWriter on the Entity lane. The spy between the encryption
// and the backend sees no plaintext in anything it is asked to keep, the
// rows as stored hold none, and the typed reads return every value.
func TestWritesThroughEncryption(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "encthru")
		props, err := mapper.EncryptedProperties[patient]()
		if err != nil {
			t.Fatal(err)
		}
		spied, spy := enctest.Wrap(b.Store)
		st := enctest.Codec(t, props...).Store(spied, name)
		repo := mapper.NewRepository[patient](st, name)
		born := time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC)

		p := &patient{Ward: "w1", ID: "1", Name: throughSecret, Born: born, Weight: 70, Notes: []byte(throughSecret), Visible: "v"}
		if err := repo.Insert(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.Weight = 71
		if err := repo.Update(ctx, p, store.Replace); err != nil {
			t.Fatal(err)
		}
		if err := repo.Upsert(ctx, &patient{Ward: "w1", ID: "0", Name: throughSecret}, store.Replace); err != nil {
			t.Fatal(err)
		}
		batch := repo.Batch()
		for i := range 3 {
			if err := batch.Insert(&patient{Ward: "w2", ID: fmt.Sprint(i), Name: batchSecret, Notes: []byte(batchSecret)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := batch.Run(ctx); err != nil {
			t.Fatal(err)
		}
		var vals []*patient
		for i := range 150 {
			vals = append(vals, &patient{Ward: fmt.Sprintf("w%d", 3+i%2), ID: fmt.Sprint(i), Name: bulkSecret, Born: born})
		}
		if res, err := repo.BulkWrite(ctx, store.ActionUpsertReplace, vals, store.BulkOptions{}); err != nil || res.Written != 150 {
			t.Fatalf("BulkWrite: %d written, %v", res.Written, err)
		}
		var acts []store.Action
		for i := range 120 {
			acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "w5", RowKey: fmt.Sprint(i),
				Properties: map[string]any{"Name": writerSecret, "Weight": float64(i), "Visible": "v"}}})
		}
		if res, err := store.NewBulkWriter(st.Table(name), store.BulkOptions{}).Write(ctx, acts); err != nil || res.Written != 120 {
			t.Fatalf("BulkWriter: %d written, %v", res.Written, err)
		}

		got := map[string]patient{}
		for v, err := range repo.Query(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			got[v.Ward+"/"+v.ID] = v
		}
		if len(got) != 2+3+150+120 {
			t.Fatalf("read back %d patients", len(got))
		}
		if g := got["w1/1"]; g.Name != throughSecret || string(g.Notes) != throughSecret || !g.Born.Equal(born) || g.Weight != 71 {
			t.Fatalf("w1/1 = %+v", g)
		}
		for k, g := range got {
			want := map[string]string{"w1": throughSecret, "w2": batchSecret, "w3": bulkSecret, "w4": bulkSecret, "w5": writerSecret}[g.Ward]
			if g.Name != want {
				t.Fatalf("%s: Name %q, want %q", k, g.Name, want)
			}
		}
		if !spy.Seen("Table.Transact") {
			t.Fatal("the spy saw no transaction: the test searches nothing there")
		}
		leaks := spy.Leaks(throughSecret, batchSecret, bulkSecret, writerSecret)
		stored, err := enctest.Scan(ctx, b.Store, []string{name}, throughSecret, batchSecret, bulkSecret, writerSecret)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}

// TestBulkOfLargeEncryptedEntities bulk-writes entities whose encrypted
// values make their stored form about a third larger than the plain one
// (binary is base64 on the wire): every write is applied, however the
// writer planned its transactions.
func TestBulkOfLargeEncryptedEntities(t *testing.T) {
	ctx := context.Background()
	b := backendtest.Memstore()
	name := b.NewTable(t, "encbig")
	st := enctest.Codec(t, "Name", "Notes").Store(b.Store, name)
	big := strings.Repeat("n", 30000)
	var acts []store.Action
	for i := range 100 {
		acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
			Properties: map[string]any{"Name": big, "Notes": big}}})
	}
	res, err := store.NewBulkWriter(st.Table(name), store.BulkOptions{}).Write(ctx, acts)
	if err != nil || res.Written != 100 {
		t.Fatalf("BulkWriter: %d written in %d transactions, %v", res.Written, res.Batches, err)
	}
}

// TestBatchOfLargeEncryptedEntities: the mapper's Batch refuses, as full,
// the entity that would take the encrypted transaction over the
// service's limit, and the batch it holds then runs.
func TestBatchOfLargeEncryptedEntities(t *testing.T) {
	ctx := context.Background()
	b := backendtest.Memstore()
	name := b.NewTable(t, "encbatch")
	st := enctest.Codec(t, "Name", "Notes").Store(b.Store, name)
	repo := mapper.NewRepository[patient](st, name)
	big := strings.Repeat("n", 30000)
	batch := repo.Batch()
	n := 0
	for ; n < store.MaxBatchActions; n++ {
		err := batch.Insert(&patient{Ward: "w", ID: fmt.Sprint(n), Name: big, Notes: []byte(big)})
		if errors.Is(err, mapper.ErrBatchFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == store.MaxBatchActions {
		t.Fatal("the batch took 100 entities whose encrypted transaction is over 4 MiB")
	}
	if err := batch.Run(ctx); err != nil {
		t.Fatalf("a batch of %d: %v", n, err)
	}
}

// TestEncryptedWireSizeEstimate: an encrypting table's estimate of an
// action's size is at least the size of the action it sends, and at most
// a little more (a wrapped key of RSA's size), for every type of value
// and both formats.
func TestEncryptedWireSizeEstimate(t *testing.T) {
	ctx := context.Background()
	for _, legacy := range []bool{false, true} {
		props := []string{"S", "B", "I", "D", "T", "G", "When", "Long"}
		if legacy {
			props = []string{"S", "Long"}
		}
		c, err := encryption.NewCodec(encryption.Config{Key: enctest.Key(t, "k", 1), Properties: props, Legacy: legacy})
		if err != nil {
			t.Fatal(err)
		}
		tbl := c.Table(backendtest.Memstore().Store.Table("Sized"))
		sizer, ok := tbl.(interface{ ActionWireSize(*store.Action) int })
		if !ok {
			t.Fatal("the encrypting table has no ActionWireSize")
		}
		for _, long := range []string{"", "x", strings.Repeat("é\"<", 10000)} {
			e := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": "short", "Long": long, "Plain": long}}
			if !legacy {
				e.Properties["B"], e.Properties["I"], e.Properties["D"] = []byte(long), int64(-1), 2.5
				e.Properties["T"], e.Properties["G"], e.Properties["When"] = true, store.GUID{1}, time.Unix(1, 0).UTC()
			}
			a := store.Action{Kind: store.ActionUpsertReplace, Entity: e}
			enc, err := c.Encrypt(ctx, "Sized", e)
			if err != nil {
				t.Fatal(err)
			}
			sent := store.ActionWireSize(&store.Action{Kind: a.Kind, Entity: enc})
			est := sizer.ActionWireSize(&a)
			if est < sent || est > sent+2000 {
				t.Errorf("legacy %v, value of %d bytes: estimate %d, sent %d", legacy, len(long), est, sent)
			}
			if plain := store.ActionWireSize(&a); long == "x" && est <= plain {
				t.Errorf("legacy %v: estimate %d is not above the plain size %d", legacy, est, plain)
			}
		}
	}
}

// TestCheckCopy: a copy of an encrypted property is refused exactly when
// its destination would store it in plain text.
func TestCheckCopy(t *testing.T) {
	ms := backendtest.Memstore().Store
	c := enctest.Codec(t, "Name", "Alias")
	other := enctest.Codec(t, "Copy")
	enc, plain, enc2 := c.Table(ms.Table("Src")), ms.Table("Plain"), other.Table(ms.Table("Dst"))
	if encryption.CodecOf(enc) != c || encryption.CodecOf(plain) != nil || encryption.CodecOf(nil) != nil {
		t.Fatal("CodecOf does not find the codec of the encrypting table alone")
	}
	if enc2 := c.Store(ms, "src").Table("SRC"); encryption.CodecOf(enc2) != c {
		t.Fatal("CodecOf does not find the codec of a table of Codec.Store")
	}
	if wrapped := intercept.WrapStore(c.Store(ms), intercept.Pass).Table("Src"); encryption.CodecOf(wrapped) != c {
		t.Fatal("CodecOf does not find the codec beneath instrumentation")
	}
	if encryption.CodecOf(intercept.WrapTable(plain, intercept.Pass)) != nil {
		t.Fatal("CodecOf finds a codec beneath a wrapper of a plain table")
	}
	for _, k := range []struct {
		src, dst store.Table
		from, to string
		refused  bool
	}{
		{enc, enc, "Name", "Name", false},
		{enc, enc, "Name", "Alias", false},
		{enc, enc, "Name", "Other", true},
		{enc, plain, "Name", "Name", true},
		{enc, nil, "Name", "Name", true},
		{enc, enc2, "Name", "Copy", false},
		{enc, enc2, "Name", "Name", true},
		{enc, plain, "Plain", "Plain", false},
		{plain, plain, "Name", "Name", false},
		{nil, plain, "Name", "Name", false},
	} {
		err := encryption.CheckCopy(k.src, k.dst, k.from, k.to)
		if (err != nil) != k.refused || (err != nil && (!errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"`+k.to+`"`))) {
			t.Errorf("CheckCopy(%v, %v, %s, %s) = %v", k.src, k.dst, k.from, k.to, err)
		}
	}
}
