package encryption_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
)

type Customer struct {
	Region string `table:",pk"`
	ID     string `table:",rk"`
	Name   string `table:",encrypt"`
	IBAN   string `table:",encrypt"`
	Tier   int32
}

func Example() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Customers")

	// A key-encryption key drawn here for the example; in production it
	// comes from a key store and has a stable id that changes on rotation.
	kek := make([]byte, 32)
	_, _ = rand.Read(kek)
	key, _ := encryption.NewLocalKey("customers-2026-11", kek)

	props, _ := mapper.EncryptedProperties[Customer]()
	codec, _ := encryption.NewCodec(encryption.Config{Key: key, Properties: props})
	repo := mapper.NewRepository[Customer](codec.Store(st, "Customers"), "Customers")

	_ = repo.Insert(ctx, &Customer{Region: "eu", ID: "42", Name: "Ada", IBAN: "GB33BUKB20201555555555", Tier: 2})

	raw, _ := st.Table("Customers").Get(ctx, "eu", "42", nil)
	fmt.Printf("stored Name: %T, Tier: %v\n", raw.Properties["Name"], raw.Properties["Tier"])

	c, _ := repo.Get(ctx, "eu", "42")
	fmt.Println("read:", c.Name, c.IBAN)
	// Output:
	// stored Name: []uint8, Tier: 2
	// read: Ada GB33BUKB20201555555555
}
