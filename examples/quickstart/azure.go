package main

import (
	"errors"

	"github.com/tablekit/tablekit/store"
)

// openAzure is replaced once store/azstore lands.
func openAzure(conn string) (store.Store, error) {
	return nil, errors.New("the Azure backend is not built into this example yet")
}
