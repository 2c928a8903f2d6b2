package mapper

import (
	"fmt"
	"strings"
)

// tagOptions is a parsed `table:"Name,opts"` tag.
type tagOptions struct {
	name      string
	skip      bool
	omitEmpty bool
	role      role
	json      bool
	// large: the value may pass the property limits (see large.go).
	large bool
	// encrypt: the property is encrypted on the client (see encrypt.go).
	encrypt bool
}

// role is what a field stands for in an entity.
type role uint8

const (
	roleProp role = iota
	rolePK
	roleRK
	roleETag
	roleTimestamp
	roleExtra
)

// String names the role as its tag option.
func (r role) String() string {
	switch r {
	case rolePK:
		return "pk"
	case roleRK:
		return "rk"
	case roleETag:
		return "etag"
	case roleTimestamp:
		return "timestamp"
	case roleExtra:
		return "extra"
	}
	return "property"
}

// parseTag reads a struct tag value. It refuses unknown options and
// conflicting roles so that a typo never silently changes the mapping.
func parseTag(tag string) (tagOptions, error) {
	var o tagOptions
	if tag == "-" {
		o.skip = true
		return o, nil
	}
	name, rest, _ := strings.Cut(tag, ",")
	o.name = name
	if rest == "" {
		return o, nil
	}
	for opt := range strings.SplitSeq(rest, ",") {
		var r role
		switch opt {
		case "omitempty":
			o.omitEmpty = true
			continue
		case "json":
			o.json = true
			continue
		case "large":
			o.large = true
			continue
		case "encrypt":
			o.encrypt = true
			continue
		case "pk":
			r = rolePK
		case "rk":
			r = roleRK
		case "etag":
			r = roleETag
		case "timestamp":
			r = roleTimestamp
		case "extra":
			r = roleExtra
		case "":
			continue
		default:
			return o, fmt.Errorf("unknown tag option %q (want omitempty, pk, rk, etag, timestamp, json, large, encrypt or extra)", opt)
		}
		if o.role != roleProp && o.role != r {
			return o, fmt.Errorf("tag options %q and %q conflict: a field has one role", o.role, r)
		}
		o.role = r
	}
	if o.role != roleProp && o.role != roleExtra && o.json {
		return o, fmt.Errorf("tag option json cannot go with %q", o.role)
	}
	if o.role == roleExtra && o.json {
		return o, fmt.Errorf("tag option json cannot go with \"extra\"")
	}
	if o.large && o.role != roleProp {
		return o, fmt.Errorf("tag option large cannot go with %q: only a property's value can be large", o.role)
	}
	if o.encrypt && o.role != roleProp {
		return o, fmt.Errorf("tag option encrypt cannot go with %q: only a property's value is encrypted", o.role)
	}
	if o.encrypt && o.large {
		return o, fmt.Errorf("tag options encrypt and large conflict: a value kept in a blob would not be encrypted")
	}
	return o, nil
}
