package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/spf13/pflag"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/localstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
)

// connFlags are the flags naming one account; prefix "" for the source,
// "to-" for the destination of copy, verify and diff.
type connFlags struct {
	prefix       string
	conn         string
	connFile     string
	account      string
	endpoint     string
	blobEndpoint string
	sasURL       string
	local        string
}

func (c *connFlags) register(fs *pflag.FlagSet, prefix string) {
	c.prefix = prefix
	what := "the account"
	if prefix != "" {
		what = "the destination account (default: the source's)"
	}
	fs.StringVar(&c.conn, prefix+"conn", "", "connection string of "+what+" (prefer --"+prefix+"conn-file or the environment)")
	fs.StringVar(&c.connFile, prefix+"conn-file", "", "file holding the connection string of "+what)
	fs.StringVar(&c.account, prefix+"account", "", "storage account name of "+what+", signed in with Microsoft Entra ID")
	fs.StringVar(&c.endpoint, prefix+"table-endpoint", "", "Table service URL for --"+prefix+"account (default https://NAME.table.core.windows.net)")
	fs.StringVar(&c.blobEndpoint, prefix+"blob-endpoint", "", "Blob service URL for --"+prefix+"account (backup --container; default https://NAME.blob.core.windows.net)")
	fs.StringVar(&c.sasURL, prefix+"sas-url", "", "Table service URL with a SAS query for "+what)
	fs.StringVar(&c.local, prefix+"local", "", "folder of a local store for "+what)
}

func (c *connFlags) given() bool {
	return c.conn != "" || c.connFile != "" || c.account != "" || c.sasURL != "" || c.local != ""
}

// conn is an open account.
type conn struct {
	st    store.Store
	local string // folder of a local store
	label string // how to name it in messages: never a secret
	dirty bool
}

// open connects to the account the flags (or, for the source, the
// environment) name. A secret never appears in an error.
func (a *app) open(ctx context.Context, c *connFlags) (*conn, error) {
	n := 0
	for _, s := range []string{c.conn, c.connFile, c.account, c.sasURL, c.local} {
		if s != "" {
			n++
		}
	}
	if n > 1 {
		p := c.prefix
		return nil, usagef("give one of --%sconn, --%sconn-file, --%saccount, --%ssas-url and --%slocal", p, p, p, p, p)
	}
	cf := *c
	if n == 0 && c.prefix == "" {
		switch {
		case a.env.Getenv("TABLEKIT_LOCAL") != "":
			cf.local = a.env.Getenv("TABLEKIT_LOCAL")
		case a.env.Getenv("TABLEKIT_CONN") != "":
			cf.conn = a.env.Getenv("TABLEKIT_CONN")
		case a.env.Getenv("AZURE_STORAGE_CONNECTION_STRING") != "":
			cf.conn = a.env.Getenv("AZURE_STORAGE_CONNECTION_STRING")
		case a.env.Getenv("TABLEKIT_SAS_URL") != "":
			cf.sasURL = a.env.Getenv("TABLEKIT_SAS_URL")
		case a.env.Getenv("TABLEKIT_ACCOUNT") != "":
			cf.account = a.env.Getenv("TABLEKIT_ACCOUNT")
		default:
			return nil, usagef("no account: give --conn-file, --account, --sas-url or --local, or set TABLEKIT_CONN, AZURE_STORAGE_CONNECTION_STRING, TABLEKIT_SAS_URL or TABLEKIT_LOCAL")
		}
	}
	if cf.connFile != "" {
		b, err := os.ReadFile(cf.connFile)
		if err != nil {
			return nil, fmt.Errorf("--%sconn-file: %v", c.prefix, err)
		}
		cf.conn = strings.TrimSpace(string(b))
	}
	switch {
	case cf.local != "":
		unlock, err := localstore.Lock(cf.local)
		if err != nil {
			return nil, fmt.Errorf("--%slocal: %v", c.prefix, err)
		}
		a.closers = append(a.closers, unlock)
		st, err := localstore.Open(cf.local)
		if err != nil {
			return nil, fmt.Errorf("--%slocal %s: %v", c.prefix, cf.local, err)
		}
		return &conn{st: st, local: cf.local, label: "local " + cf.local}, nil
	case cf.conn != "":
		st, err := azstore.NewFromConnectionString(cf.conn, a.azOptions())
		if err != nil {
			return nil, fmt.Errorf("the connection string is not usable: %v", err)
		}
		return &conn{st: st, label: "the connection string's account"}, nil
	case cf.sasURL != "":
		u, err := url.Parse(cf.sasURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, usagef("--%ssas-url: not an absolute URL", c.prefix)
		}
		if u.RawQuery == "" {
			return nil, usagef("--%ssas-url: the URL has no SAS query (?sv=...&sig=...)", c.prefix)
		}
		st, err := azstore.NewFromSASURL(azstore.Endpoints{Table: cf.sasURL}, a.azOptions())
		if err != nil {
			return nil, fmt.Errorf("--%ssas-url: %v", c.prefix, redact(err.Error(), u.RawQuery))
		}
		return &conn{st: st, label: "the SAS URL's account (" + u.Host + ")"}, nil
	default:
		eps := azstore.AccountEndpoints(cf.account)
		if cf.endpoint != "" {
			eps = azstore.Endpoints{Table: cf.endpoint}
		}
		if cf.blobEndpoint != "" {
			eps.Blob = cf.blobEndpoint
		}
		opts := a.azOptions()
		newCred := a.env.Credential
		if newCred == nil {
			newCred = func() (azcoreCred, error) { return azidentity.NewDefaultAzureCredential(nil) }
		}
		cred, err := newCred()
		if err != nil {
			return nil, fmt.Errorf("the Microsoft Entra ID credential: %v", err)
		}
		if cf.endpoint == "" {
			if err := checkAccountName(cf.account); err != nil {
				return nil, err
			}
		}
		st, err := azstore.NewWithTokenCredential(eps, cred, opts)
		if err != nil {
			return nil, err
		}
		return &conn{st: st, label: "account " + cf.account}, nil
	}
}

func checkAccountName(s string) error {
	if len(s) < 3 || len(s) > 24 {
		return usagef("--account %q: a storage account name has 3 to 24 characters", s)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return usagef("--account %q: a storage account name has only lower-case letters and digits", s)
		}
	}
	return nil
}

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "REDACTED")
}

// azOptions are the Azure backend's options: the Blob service for
// backup --container.
func (a *app) azOptions() *azstore.Options {
	return &azstore.Options{Transport: a.env.Transport, Services: []azstore.Service{azblobs.Service()}}
}

// save writes a local store's snapshot when the command changed data.
func (c *conn) save(ctx context.Context) error {
	if c == nil || c.local == "" || !c.dirty {
		return nil
	}
	return localstore.Save(ctx, c.local, c.st)
}

// flush is the durability barrier of a resumable command: a local store's
// snapshot is written before the checkpoint records work done.
func (c *conn) flush(ctx context.Context) func() error {
	if c.local == "" {
		return nil
	}
	return func() error { return localstore.Save(context.WithoutCancel(ctx), c.local, c.st) }
}
