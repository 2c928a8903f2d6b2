package azstore

import (
	"fmt"
	"strings"
)

// Azurite's development account: its name and key are public, documented
// with the emulator.
const (
	devAccountName = "devstoreaccount1"
	devAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// connString is a parsed storage connection string.
type connString struct {
	account, key, sas string
	urls              Endpoints
}

// parseConnString parses "Key=Value;..." connection strings: the account
// form (DefaultEndpointsProtocol, AccountName, AccountKey, EndpointSuffix),
// explicit TableEndpoint/QueueEndpoint/BlobEndpoint, SharedAccessSignature,
// and UseDevelopmentStorage=true for Azurite on its default ports. Errors
// name the offending setting, never its value, so no key can leak.
func parseConnString(s string) (connString, error) {
	var c connString
	settings := map[string]string{}
	for i, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return c, fmt.Errorf("azstore: connection string: segment %d is not of the form Name=Value", i+1)
		}
		name := strings.ToLower(strings.TrimSpace(k))
		if !knownSetting(name) {
			// Not echoed: a mangled segment may be (part of) the key.
			return c, fmt.Errorf("azstore: connection string: segment %d is not a known setting (the segment is not shown, it may hold a key)", i+1)
		}
		settings[name] = strings.TrimSpace(v)
	}
	if len(settings) == 0 {
		return c, fmt.Errorf("azstore: connection string is empty")
	}
	if v, ok := settings["usedevelopmentstorage"]; ok {
		if !strings.EqualFold(v, "true") {
			return c, fmt.Errorf("azstore: connection string: UseDevelopmentStorage must be true")
		}
		host := "http://127.0.0.1"
		if p, ok := settings["developmentstorageproxyuri"]; ok && p != "" {
			host = strings.TrimRight(p, "/")
		}
		c.account, c.key = devAccountName, devAccountKey
		c.urls = Endpoints{
			Blob:  host + ":10000/" + devAccountName,
			Queue: host + ":10001/" + devAccountName,
			Table: host + ":10002/" + devAccountName,
		}
		return c, nil
	}
	c.account = settings["accountname"]
	c.key = settings["accountkey"]
	if c.account != "" {
		if err := validAccountName(c.account); err != nil {
			return c, err
		}
	}
	if c.key != "" && c.account == "" {
		return c, fmt.Errorf("azstore: connection string has an AccountKey but no AccountName")
	}
	c.sas = strings.TrimPrefix(settings["sharedaccesssignature"], "?")
	c.urls = Endpoints{Table: settings["tableendpoint"], Queue: settings["queueendpoint"], Blob: settings["blobendpoint"]}
	if c.urls == (Endpoints{}) {
		if c.account == "" {
			return c, fmt.Errorf("azstore: connection string has neither AccountName nor TableEndpoint/QueueEndpoint/BlobEndpoint")
		}
		proto := settings["defaultendpointsprotocol"]
		if proto == "" {
			proto = "https"
		}
		if proto != "https" && proto != "http" {
			return c, fmt.Errorf("azstore: connection string: DefaultEndpointsProtocol must be https or http")
		}
		suffix := settings["endpointsuffix"]
		if suffix == "" {
			suffix = "core.windows.net"
		}
		c.urls = Endpoints{
			Table: proto + "://" + c.account + ".table." + suffix,
			Queue: proto + "://" + c.account + ".queue." + suffix,
			Blob:  proto + "://" + c.account + ".blob." + suffix,
		}
	}
	if c.key == "" && c.sas == "" {
		return c, fmt.Errorf("azstore: connection string has neither AccountKey nor SharedAccessSignature")
	}
	return c, nil
}

// knownSetting reports the settings of an Azure Storage connection string.
func knownSetting(name string) bool {
	switch name {
	case "defaultendpointsprotocol", "accountname", "accountkey", "endpointsuffix",
		"tableendpoint", "queueendpoint", "blobendpoint", "fileendpoint",
		"tablesecondaryendpoint", "queuesecondaryendpoint", "blobsecondaryendpoint",
		"filesecondaryendpoint", "sharedaccesssignature", "usedevelopmentstorage",
		"developmentstorageproxyuri":
		return true
	}
	return false
}

// NewFromConnectionString returns a store for the account a storage
// connection string names: the string the portal shows
// ("DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...;EndpointSuffix=core.windows.net"),
// one with explicit TableEndpoint/QueueEndpoint/BlobEndpoint (Azurite on
// other ports), one with a SharedAccessSignature, or
// "UseDevelopmentStorage=true" for Azurite on its default ports. The key
// never appears in an error.
func NewFromConnectionString(conn string, opts *Options) (*Store, error) {
	c, err := parseConnString(conn)
	if err != nil {
		return nil, err
	}
	if c.key != "" {
		return NewWithSharedKey(c.account, c.key, c.urls, opts)
	}
	withSAS := func(u string) string {
		if u == "" {
			return ""
		}
		if strings.Contains(u, "?") {
			return u + "&" + c.sas
		}
		return u + "?" + c.sas
	}
	return NewFromSASURL(Endpoints{Table: withSAS(c.urls.Table), Queue: withSAS(c.urls.Queue), Blob: withSAS(c.urls.Blob)}, opts)
}
