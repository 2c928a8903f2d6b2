// Package sas makes and reads shared access signatures for Azure Table
// storage without the Azure SDK: table service SAS tokens, which may be
// narrowed to a range of partition and row keys, and account SAS tokens.
//
// A table SAS grants the holder some of query (r), add (a), update (u) and
// delete (d) on one table, between two times, optionally only on the
// entities between (StartPK, StartRK) and (EndPK, EndRK), from one IP range
// and over HTTPS only. Sign it with the account key:
//
//	cred, err := sas.NewCredential("myaccount", key)
//	token, err := sas.TableValues{
//		Table: "orders", Permissions: "r",
//		Expiry:  time.Now().Add(time.Hour),
//		StartPK: "tenant-42", EndPK: "tenant-42",
//	}.Sign(cred)
//	url := sas.TableURL("myaccount", "orders", token)
//
// Unlike aztables v1.4.0, which signs the key range but leaves spk, srk,
// epk and erk out of the token (so the service refuses its ranged tokens
// with 403), this package puts in the token every field it signs, and
// formats times in UTC.
//
// Parse reads a token back into its fields, for tools and for memstore,
// which enforces tokens as the service does. Errors never contain the
// signature or the key; Params.String redacts the signature.
//
// See docs/security.md for which token to hand to whom.
package sas

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Versions of the signed-version (sv) field.
const (
	// DefaultVersion is the sv a table SAS carries unless Version is set:
	// the Table service's current REST version.
	DefaultVersion = "2019-02-02"
	// DefaultAccountVersion is the sv an account SAS carries unless Version
	// is set; from it on the string-to-sign includes the encryption scope.
	DefaultAccountVersion = "2020-12-06"
	// MinVersion is the oldest sv this package signs and reads: the
	// version that introduced the string-to-sign with signed IP and
	// protocol.
	MinVersion = "2015-04-05"
	// encryptionScopeVersion is the first version whose account SAS
	// string-to-sign holds the encryption scope (ses).
	encryptionScopeVersion = "2020-12-06"
)

// TimeFormat is the layout of st and se: UTC, to the second.
const TimeFormat = "2006-01-02T15:04:05Z"

// MaxIdentifierLength is the longest stored access policy id (si).
const MaxIdentifierLength = store.MaxAccessPolicyIDLength

// Protocol is the spr field: the protocols a token may be used over.
type Protocol string

// The protocols a token allows. The empty Protocol allows both.
const (
	HTTPS        Protocol = "https"
	HTTPSAndHTTP Protocol = "https,http"
)

// Credential is an account's name and decoded key. Its String and
// GoString name the account only, so printing it never prints the key.
type Credential struct {
	account string
	key     []byte
}

// NewCredential decodes an account key (base64, as the portal shows it).
// The error never contains the key.
func NewCredential(account, key string) (*Credential, error) {
	if account == "" {
		return nil, invalid("the account name is empty")
	}
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(k) == 0 {
		return nil, invalid("the account key of %q is not valid base64 (the key is not shown)", account)
	}
	return &Credential{account: account, key: k}, nil
}

// Account returns the account name.
func (c *Credential) Account() string { return c.account }

// String names the account, never the key.
func (c *Credential) String() string { return "sas.Credential{" + c.account + "}" }

// GoString names the account, never the key.
func (c *Credential) GoString() string { return c.String() }

// Signature returns the base64 HMAC-SHA256 of stringToSign under the key.
func (c *Credential) Signature(stringToSign string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(stringToSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TableValues are the fields of a table service SAS.
type TableValues struct {
	// Version is sv; "" takes DefaultVersion. At least MinVersion.
	Version string
	// Table is the table the token grants (tn); the string-to-sign holds
	// it in lower case.
	Table string
	// Permissions are letters of "raud" in any order (r query, a add, u
	// update, d delete); the token holds them in that order. May be empty
	// when Identifier names a policy that sets them.
	Permissions string
	// Start, when set, is the first instant the token is valid; Expiry is
	// the instant it stops. Either may come from the stored policy instead.
	// Any time zone: the token holds them in UTC, to the second.
	Start, Expiry time.Time
	// Identifier (si) names a stored access policy of the table.
	Identifier string
	// IP (sip) is one address or a range "a-b" the requests must come from.
	IP string
	// Protocol (spr) is "", HTTPS or HTTPSAndHTTP.
	Protocol Protocol
	// StartPK and StartRK are the lowest key the token reaches, EndPK and
	// EndRK the highest, both inclusive, compared as the key pair
	// (PartitionKey, RowKey). A row key needs its partition key.
	StartPK, StartRK, EndPK, EndRK string
}

// AccountValues are the fields of an account SAS.
type AccountValues struct {
	// Version is sv; "" takes DefaultAccountVersion.
	Version string
	// Services (ss) are letters of "bqtf" (blob, queue, table, file).
	Services string
	// ResourceTypes (srt) are letters of "sco" (service, container such
	// as a table, object such as an entity).
	ResourceTypes string
	// Permissions (sp) are letters of "rwdxylacuptfi"; the token holds
	// them in that order. For tables: r read, w write, d delete, l list,
	// a add, c create, u update, p process.
	Permissions string
	// Start and Expiry as in TableValues; Expiry is required.
	Start, Expiry time.Time
	// IP and Protocol as in TableValues.
	IP       string
	Protocol Protocol
	// EncryptionScope (ses), from version 2020-12-06 on.
	EncryptionScope string
}

// Sign returns the token (the query string, without "?") of the values
// signed with cred, or an error naming the bad value and its limit.
func (v TableValues) Sign(cred *Credential) (string, error) {
	p, err := v.params()
	if err != nil {
		return "", err
	}
	if cred == nil {
		return "", invalid("the credential is nil")
	}
	p.Signature = cred.Signature(p.StringToSign(cred.account))
	return p.Encode(), nil
}

// StringToSign returns what Sign signs for account: the fields joined
// with "\n" in the order of the REST reference for versions 2015-04-05
// and later: sp, st, se, /table/<account>/<table in lower case>, si, sip,
// spr, sv, spk, srk, epk, erk.
func (v TableValues) StringToSign(account string) (string, error) {
	p, err := v.params()
	if err != nil {
		return "", err
	}
	return p.StringToSign(account), nil
}

// params checks the values and turns them into the token's fields.
func (v TableValues) params() (*Params, error) {
	p := &Params{
		Version:    v.Version,
		Table:      v.Table,
		Identifier: v.Identifier,
		IP:         v.IP,
		Protocol:   string(v.Protocol),
		StartPK:    v.StartPK, StartRK: v.StartRK, EndPK: v.EndPK, EndRK: v.EndRK,
	}
	if p.Version == "" {
		p.Version = DefaultVersion
	}
	if err := store.ValidateTableName(v.Table); err != nil {
		return nil, invalid("table (tn): %s", errMessage(err))
	}
	p.Table = strings.ToLower(v.Table)
	perm, err := driver.NormalizeTablePermission(v.Permissions)
	if err != nil {
		return nil, invalid("sp: %s", errMessage(err))
	}
	p.Permissions = perm
	p.Start, p.Expiry = FormatTime(v.Start), FormatTime(v.Expiry)
	if v.Identifier == "" {
		if perm == "" {
			return nil, invalid("sp is empty: a token without a stored access policy (si) needs permissions (letters of raud)")
		}
		if v.Expiry.IsZero() {
			return nil, invalid("se is not set: a token without a stored access policy (si) needs an expiry")
		}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// Sign returns the account SAS token of the values signed with cred.
func (v AccountValues) Sign(cred *Credential) (string, error) {
	p, err := v.params()
	if err != nil {
		return "", err
	}
	if cred == nil {
		return "", invalid("the credential is nil")
	}
	p.Signature = cred.Signature(p.StringToSign(cred.account))
	return p.Encode(), nil
}

// StringToSign returns what Sign signs for account: account name, sp, ss,
// srt, st, se, sip, spr, sv, then (from 2020-12-06) ses, each followed by
// "\n".
func (v AccountValues) StringToSign(account string) (string, error) {
	p, err := v.params()
	if err != nil {
		return "", err
	}
	return p.StringToSign(account), nil
}

func (v AccountValues) params() (*Params, error) {
	p := &Params{
		Version:         v.Version,
		IP:              v.IP,
		Protocol:        string(v.Protocol),
		EncryptionScope: v.EncryptionScope,
	}
	if p.Version == "" {
		p.Version = DefaultAccountVersion
	}
	var err error
	if p.Services, err = normalizeLetters("ss", v.Services, accountServices); err != nil {
		return nil, err
	}
	if p.ResourceTypes, err = normalizeLetters("srt", v.ResourceTypes, accountResourceTypes); err != nil {
		return nil, err
	}
	if p.Permissions, err = normalizeLetters("sp", v.Permissions, accountPermissions); err != nil {
		return nil, err
	}
	if v.Expiry.IsZero() {
		return nil, invalid("se is not set: an account SAS needs an expiry")
	}
	p.Start, p.Expiry = FormatTime(v.Start), FormatTime(v.Expiry)
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// FormatTime formats t for st and se: converted to UTC first, to the
// second. The zero time gives "".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// TableURL returns https://<account>.table.core.windows.net/<table>?<token>.
func TableURL(account, table, token string) string {
	return EndpointTableURL("https://"+account+".table.core.windows.net", table, token)
}

// EndpointTableURL returns the URL of table under a Table service endpoint
// (Azurite's http://127.0.0.1:10002/devstoreaccount1, say) with the token
// as its query: exactly one "/" between endpoint and table.
func EndpointTableURL(endpoint, table, token string) string {
	u := strings.TrimRight(endpoint, "/") + "/" + url.PathEscape(table)
	if token != "" {
		u += "?" + strings.TrimPrefix(token, "?")
	}
	return u
}

// The letters of the account SAS fields, in the order the token holds them.
const (
	accountServices      = "bqtf"
	accountResourceTypes = "sco"
	accountPermissions   = "rwdxylacuptfi"
)

// normalizeLetters checks that s holds only letters of allowed and returns
// them in allowed's order.
func normalizeLetters(field, s, allowed string) (string, error) {
	has := make([]bool, len(allowed))
	for i, c := range s {
		j := strings.IndexRune(allowed, c)
		if j < 0 {
			return "", invalid("%s %q: letter %q at offset %d is not one of %q", field, s, c, i, allowed)
		}
		has[j] = true
	}
	b := make([]byte, 0, len(allowed))
	for j, ok := range has {
		if ok {
			b = append(b, allowed[j])
		}
	}
	if len(b) == 0 {
		return "", invalid("%s is empty: it needs letters of %q", field, allowed)
	}
	return string(b), nil
}

// invalid builds the package's errors: *store.Error values of code
// InvalidInput (400) made by the client, matching store.ErrInvalidInput.
func invalid(format string, args ...any) error {
	return &store.Error{Code: store.CodeInvalidInput, Status: 400, Index: -1,
		Message: "sas: " + fmt.Sprintf(format, args...), Source: store.SourceClient}
}

// errMessage returns the message of a *store.Error without its code.
func errMessage(err error) string {
	var se *store.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
