package sas

import (
	"crypto/subtle"
	"encoding/base64"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Params are the fields of a token as it carries them, decoded from the
// query: a table SAS (Table set) or an account SAS (Services and
// ResourceTypes set). The string-to-sign is made from these texts as they
// are, so a parsed token verifies exactly as it was signed.
//
// Signature is as secret as the token itself: String redacts it.
type Params struct {
	Version         string // sv
	Services        string // ss, account SAS
	ResourceTypes   string // srt, account SAS
	Permissions     string // sp
	Start           string // st, "" when not set
	Expiry          string // se, "" when not set
	IP              string // sip
	Protocol        string // spr
	Identifier      string // si, table SAS
	Table           string // tn, table SAS
	StartPK         string // spk
	StartRK         string // srk
	EndPK           string // epk
	EndRK           string // erk
	EncryptionScope string // ses, account SAS
	Signature       string // sig
}

// params maps each query parameter to its field.
func (p *Params) field(name string) *string {
	switch name {
	case "sv":
		return &p.Version
	case "ss":
		return &p.Services
	case "srt":
		return &p.ResourceTypes
	case "sp":
		return &p.Permissions
	case "st":
		return &p.Start
	case "se":
		return &p.Expiry
	case "sip":
		return &p.IP
	case "spr":
		return &p.Protocol
	case "si":
		return &p.Identifier
	case "tn":
		return &p.Table
	case "spk":
		return &p.StartPK
	case "srk":
		return &p.StartRK
	case "epk":
		return &p.EndPK
	case "erk":
		return &p.EndRK
	case "ses":
		return &p.EncryptionScope
	case "sig":
		return &p.Signature
	}
	return nil
}

// order is the order Encode writes the parameters in: url.Values' sorted
// order, as the SDKs write them.
var order = []string{"epk", "erk", "se", "ses", "si", "sig", "sip", "sp", "spk", "spr", "srk", "srt", "ss", "st", "sv", "tn"}

// IsAccount reports an account SAS (ss or srt present).
func (p *Params) IsAccount() bool { return p.Services != "" || p.ResourceTypes != "" }

// Parse reads a token: a query string with or without its leading "?", or
// a whole URL whose query is the token. It refuses a malformed token with
// an error matching store.ErrInvalidInput that names the parameter (and
// never contains the signature): a repeated or missing required
// parameter, a bad time, version, permission letter, IP range or
// protocol, an si over 64 characters, an end before the start. Parameters
// that are not SAS fields (a URL's own) are ignored.
func Parse(token string) (*Params, error) {
	if i := strings.IndexByte(token, '?'); i >= 0 {
		token = token[i+1:]
	}
	p := &Params{}
	seen := map[string]bool{}
	for _, part := range strings.Split(token, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, invalid("a parameter name is not valid percent-encoding")
		}
		f := p.field(name)
		if f == nil {
			continue
		}
		if seen[name] {
			return nil, invalid("parameter %s appears twice", name)
		}
		seen[name] = true
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, invalid("parameter %s is not valid percent-encoding", name)
		}
		*f = val
	}
	if p.Signature == "" {
		return nil, invalid("parameter sig is missing: the token is not signed")
	}
	if _, err := base64Len(p.Signature); err != nil {
		return nil, invalid("parameter sig is not base64 (the value is not shown)")
	}
	if p.Version == "" {
		return nil, invalid("parameter sv is missing")
	}
	if p.IsAccount() {
		if p.Table != "" || p.Identifier != "" || p.StartPK != "" || p.StartRK != "" || p.EndPK != "" || p.EndRK != "" {
			return nil, invalid("a token with ss or srt is an account SAS: it cannot carry tn, si, spk, srk, epk or erk")
		}
		for _, f := range []struct{ name, v, allowed string }{
			{"ss", p.Services, accountServices}, {"srt", p.ResourceTypes, accountResourceTypes}, {"sp", p.Permissions, accountPermissions},
		} {
			if f.v == "" {
				return nil, invalid("parameter %s is missing: an account SAS needs it", f.name)
			}
			if _, err := normalizeLetters(f.name, f.v, f.allowed); err != nil {
				return nil, err
			}
		}
		if p.Expiry == "" {
			return nil, invalid("parameter se is missing: an account SAS needs it")
		}
	} else {
		if p.Table == "" {
			return nil, invalid("parameter tn is missing: a table SAS names its table (an account SAS has ss and srt)")
		}
		if err := store.ValidateTableName(p.Table); err != nil {
			return nil, invalid("parameter tn: %s", errMessage(err))
		}
		if _, err := driver.NormalizeTablePermission(p.Permissions); err != nil {
			return nil, invalid("parameter sp: %s", errMessage(err))
		}
		if p.Identifier == "" && (p.Permissions == "" || p.Expiry == "") {
			return nil, invalid("parameter sp or se is missing: a table SAS without a stored access policy (si) needs both")
		}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// check runs the checks signing and parsing share.
func (p *Params) check() error {
	if !validVersion(p.Version) {
		return invalid("parameter sv %q is not a version (YYYY-MM-DD)", p.Version)
	}
	if p.Version < MinVersion {
		return invalid("parameter sv %s is older than %s, the oldest version this package signs and reads", p.Version, MinVersion)
	}
	st, err := parseField("st", p.Start)
	if err != nil {
		return err
	}
	se, err := parseField("se", p.Expiry)
	if err != nil {
		return err
	}
	if !st.IsZero() && !se.IsZero() && !se.After(st) {
		return invalid("parameter se %s is not after st %s", p.Expiry, p.Start)
	}
	if p.IP != "" {
		if _, err := ParseIPRange(p.IP); err != nil {
			return err
		}
	}
	switch Protocol(p.Protocol) {
	case "", HTTPS, HTTPSAndHTTP:
	default:
		return invalid("parameter spr %q is not %q or %q", p.Protocol, HTTPS, HTTPSAndHTTP)
	}
	if n := utf8.RuneCountInString(p.Identifier); n > MaxIdentifierLength {
		return invalid("parameter si is %d characters long: a stored access policy id has at most %d", n, MaxIdentifierLength)
	}
	if p.StartRK != "" && p.StartPK == "" {
		return invalid("parameter srk is set without spk: a start row key needs its partition key")
	}
	if p.EndRK != "" && p.EndPK == "" {
		return invalid("parameter erk is set without epk: an end row key needs its partition key")
	}
	for _, k := range []struct{ name, v string }{{"spk", p.StartPK}, {"srk", p.StartRK}, {"epk", p.EndPK}, {"erk", p.EndRK}} {
		if k.v != "" {
			if err := store.ValidateKeys(k.v, ""); err != nil {
				return invalid("parameter %s: %s", k.name, errMessage(err))
			}
		}
	}
	if p.StartPK != "" && p.EndPK != "" {
		c := store.CompareOrdinal(p.EndPK, p.StartPK)
		if c < 0 || c == 0 && p.StartRK != "" && p.EndRK != "" && store.CompareOrdinal(p.EndRK, p.StartRK) < 0 {
			return invalid("the key range ends (epk %q, erk %q) before it starts (spk %q, srk %q)", p.EndPK, p.EndRK, p.StartPK, p.StartRK)
		}
	}
	return nil
}

func validVersion(v string) bool {
	_, err := time.Parse("2006-01-02", v)
	return err == nil && len(v) == 10
}

// timeLayouts are the ISO 8601 forms the service accepts for st and se,
// all in UTC.
var timeLayouts = []string{TimeFormat, "2006-01-02T15:04Z", "2006-01-02", "2006-01-02T15:04:05.9999999Z"}

func parseField(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalid("parameter %s %q is not a UTC time such as 2024-05-01T12:00:00Z", name, v)
}

// StartTime returns st as a time; zero when not set.
func (p *Params) StartTime() time.Time { t, _ := parseField("st", p.Start); return t }

// ExpiryTime returns se as a time; zero when not set.
func (p *Params) ExpiryTime() time.Time { t, _ := parseField("se", p.Expiry); return t }

// StringToSign returns the string-to-sign of the token for account, from
// its fields as they are: the table form or the account form.
func (p *Params) StringToSign(account string) string {
	if p.IsAccount() {
		fields := []string{account, p.Permissions, p.Services, p.ResourceTypes, p.Start, p.Expiry, p.IP, p.Protocol, p.Version}
		if p.Version >= encryptionScopeVersion {
			fields = append(fields, p.EncryptionScope)
		}
		return strings.Join(fields, "\n") + "\n"
	}
	return strings.Join([]string{
		p.Permissions, p.Start, p.Expiry,
		"/table/" + account + "/" + strings.ToLower(p.Table),
		p.Identifier, p.IP, p.Protocol, p.Version,
		p.StartPK, p.StartRK, p.EndPK, p.EndRK,
	}, "\n")
}

// Encode returns the token: every set field, percent-encoded, in sorted
// order of the parameter names.
func (p *Params) Encode() string { return p.encode(false) }

// String returns the token with its signature replaced by "REDACTED", for
// logs and messages.
func (p *Params) String() string { return p.encode(true) }

func (p *Params) encode(redact bool) string {
	var b strings.Builder
	for _, name := range order {
		v := *p.field(name)
		if v == "" {
			continue
		}
		if name == "sig" && redact {
			v = "REDACTED"
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	return b.String()
}

// Verify reports whether the token's signature is cred's signature of its
// string-to-sign, in constant time.
func (p *Params) Verify(cred *Credential) bool {
	want := cred.Signature(p.StringToSign(cred.account))
	return len(want) == len(p.Signature) && subtleEqual(want, p.Signature)
}

// InRange reports whether the key (pk, rk) lies in the token's key range,
// bounds inclusive, compared as key pairs in the service's order. A token
// without a range covers every key.
func (p *Params) InRange(pk, rk string) bool {
	if p.StartPK != "" {
		if c := store.CompareOrdinal(pk, p.StartPK); c < 0 || c == 0 && p.StartRK != "" && store.CompareOrdinal(rk, p.StartRK) < 0 {
			return false
		}
	}
	if p.EndPK != "" {
		if c := store.CompareOrdinal(pk, p.EndPK); c > 0 || c == 0 && p.EndRK != "" && store.CompareOrdinal(rk, p.EndRK) > 0 {
			return false
		}
	}
	return true
}

// Ranged reports whether the token carries a key range.
func (p *Params) Ranged() bool { return p.StartPK != "" || p.EndPK != "" }

// IPRange is a sip value: one address (Start, End equal) or a range.
type IPRange struct {
	Start, End netip.Addr
}

// ParseIPRange reads "a" or "a-b" (IPv4 or IPv6 addresses).
func ParseIPRange(s string) (IPRange, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := netip.ParseAddr(lo)
	if err != nil {
		return IPRange{}, invalid("parameter sip %q: %q is not an IP address", s, lo)
	}
	r := IPRange{Start: a, End: a}
	if isRange {
		if r.End, err = netip.ParseAddr(hi); err != nil {
			return IPRange{}, invalid("parameter sip %q: %q is not an IP address", s, hi)
		}
		if r.End.Is4() != a.Is4() || r.End.Less(a) {
			return IPRange{}, invalid("parameter sip %q: the range ends before it starts or mixes IPv4 and IPv6", s)
		}
	}
	return r, nil
}

// Contains reports whether ip is in the range.
func (r IPRange) Contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.Is4() == r.Start.Is4() && !ip.Less(r.Start) && !r.End.Less(ip)
}

func base64Len(s string) (int, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	return len(b), err
}

func subtleEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
