// Package backend chooses the store an example program runs on: memstore
// by default, or Azurite or Azure from a connection string given with
// -conn, TABLEKIT_CONN or TABLEKIT_AZURITE_CONN (in that order).
//
// On Azure the store has the Table service only, unless the example
// passes the services it uses to Open: azqueues.Service() for queues,
// azblobs.Service() for blob containers. The package imports neither, so
// an example that uses tables alone links no queue or blob module (the
// blob module brings arrow-go and its compressors).
package backend

import (
	"flag"
	"os"
	"strings"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// Environment variables read when -conn is not given.
const (
	// ConnEnv names the connection string an example uses.
	ConnEnv = "TABLEKIT_CONN"
	// AzuriteEnv is what make test and make azurite export for Azurite.
	AzuriteEnv = "TABLEKIT_AZURITE_CONN"
)

// ConnFlag registers -conn on the default flag set.
func ConnFlag() *string {
	return flag.String("conn", "", "storage connection string for Azurite or Azure (default: $"+ConnEnv+", then $"+AzuriteEnv+", else memstore)")
}

// Choose returns the connection string to use: flagValue, else
// TABLEKIT_CONN, else TABLEKIT_AZURITE_CONN, else "" (memstore).
func Choose(flagValue string) string {
	for _, c := range []string{flagValue, os.Getenv(ConnEnv), os.Getenv(AzuriteEnv)} {
		if strings.TrimSpace(c) != "" {
			return c
		}
	}
	return ""
}

// Open returns the store for conn ("" is a fresh memstore, which has
// tables, queues and containers; otherwise azstore with its Table service
// and the services given) and a one-line description of it for the
// program to print, which never contains the connection string's secrets.
func Open(conn string, services ...azstore.Service) (st store.Store, name string, err error) {
	if conn == "" {
		return memstore.New(), "memstore (in memory)", nil
	}
	az, err := azstore.NewFromConnectionString(conn, &azstore.Options{Services: services})
	if err != nil {
		return nil, "", err
	}
	return az, describe(conn), nil
}

// Describe names the backend of a connection string for a program to
// print, without its secrets: what Open returns as the name.
func Describe(conn string) string { return describe(conn) }

// describe names the backend of a connection string: Azurite (the
// development account or a loopback endpoint) or Azure with its account.
func describe(conn string) string {
	account, table := "", ""
	for _, part := range strings.Split(conn, ";") {
		k, v, _ := strings.Cut(part, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "accountname":
			account = strings.TrimSpace(v)
		case "tableendpoint":
			table = strings.TrimSpace(v)
		case "usedevelopmentstorage":
			return "Azurite (development storage)"
		}
	}
	if account == "devstoreaccount1" || strings.Contains(table, "127.0.0.1") || strings.Contains(table, "localhost") {
		return "Azurite (" + account + ")"
	}
	if account != "" {
		return "Azure (account " + account + ")"
	}
	return "Azure"
}
