package encryption_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

type patient struct {
	Ward    string    `table:",pk"`
	ID      string    `table:",rk"`
	ETag    string    `table:",etag"`
	Name    string    `table:",encrypt"`
	Born    time.Time `table:",encrypt"`
	Weight  float64   `table:",encrypt"`
	Room    int32
	Notes   []byte `table:",encrypt,omitempty"`
	Visible string
}

func newPatients(t testing.TB) (*mapper.Repository[patient], store.Table) {
	t.Helper()
	ctx := context.Background()
	ms := memstore.New()
	if err := ms.CreateTable(ctx, "Patients"); err != nil {
		t.Fatal(err)
	}
	props, err := mapper.EncryptedProperties[patient]()
	if err != nil {
		t.Fatal(err)
	}
	key, err := encryption.NewLocalKey("test-kek", make([]byte, 32)) // a TEST key of zeros
	if err != nil {
		t.Fatal(err)
	}
	c, err := encryption.NewCodec(encryption.Config{Key: key, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	return mapper.NewRepository[patient](c.Store(ms, "patients"), "Patients"), ms.Table("Patients")
}

func TestMapperEncryptTag(t *testing.T) {
	props, err := mapper.EncryptedProperties[patient]()
	if err != nil || len(props) != 4 || props[0] != "Name" || props[3] != "Notes" {
		t.Fatalf("EncryptedProperties = %v, %v", props, err)
	}
	type bad struct {
		P string `table:",pk,encrypt"`
	}
	if _, err := mapper.EncryptedProperties[bad](); err == nil {
		t.Fatal("encrypt on the PartitionKey was accepted")
	}
	type bad2 struct {
		B string `table:",encrypt,large"`
	}
	if _, err := mapper.EncryptedProperties[bad2](); err == nil {
		t.Fatal("encrypt with large was accepted")
	}
}

func TestRepositoryThroughEncryption(t *testing.T) {
	ctx := context.Background()
	repo, raw := newPatients(t)
	if _, ok := driver.Typed(repo.Table()); !ok {
		t.Fatal("the repository lost the typed lane")
	}
	born := time.Date(1980, 2, 29, 0, 0, 0, 0, time.UTC)
	p := patient{Ward: "w1", ID: "1", Name: "Ada", Born: born, Weight: 61.5, Room: 12, Notes: []byte("allergic"), Visible: "yes"}
	if err := repo.Insert(ctx, &p); err != nil {
		t.Fatal(err)
	}
	stored, _ := raw.Get(ctx, "w1", "1", nil)
	for _, n := range []string{"Name", "Born", "Weight", "Notes"} {
		if _, ok := stored.Properties[n].([]byte); !ok {
			t.Fatalf("%s stored as %T", n, stored.Properties[n])
		}
	}
	if stored.Properties["Room"] != int32(12) {
		t.Fatalf("Room stored as %v", stored.Properties["Room"])
	}
	got, err := repo.Get(ctx, "w1", "1")
	if err != nil || got.Name != "Ada" || !got.Born.Equal(born) || got.Weight != 61.5 || string(got.Notes) != "allergic" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	got.Name = "Ada L."
	if err := repo.Update(ctx, &got, store.Replace); err != nil {
		t.Fatal(err)
	}
	if err := repo.Update(ctx, &got, store.Merge); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("a merge of encrypted fields: %v", err)
	}
	vals := []*patient{{Ward: "w1", ID: "2", Name: "Bo"}, {Ward: "w1", ID: "3", Name: "Cy"}}
	if _, err := repo.BulkWrite(ctx, store.ActionUpsertReplace, vals, store.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for v, err := range repo.Query(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names[v.ID] = v.Name
	}
	if names["1"] != "Ada L." || names["2"] != "Bo" || names["3"] != "Cy" {
		t.Fatalf("Query = %v", names)
	}
	refused := 0
	for _, err := range repo.Query(ctx, mapper.Where[patient]("Name").Eq("Bo")) {
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a filter on an encrypted field: %v", err)
		}
		refused++
	}
	if refused != 1 {
		t.Fatalf("a filter on an encrypted field: %d errors", refused)
	}
}
