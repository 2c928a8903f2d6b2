package driver

import (
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// Rules of table requests that only a backend applies. The rules of keys,
// names, values, entities, actions and transactions are store's
// (store.ValidateKeys, store.ValidateEntity, store.ValidateTransaction):
// the bulk writer and programs use them too.

// ValidateGet checks a point read: its keys and, when opts is given, its
// $select. It returns the projection (nil for the whole entity). Every
// backend calls it before reading.
func ValidateGet(pk, rk string, opts *store.GetOptions) ([]string, error) {
	if err := store.ValidateKeys(pk, rk); err != nil {
		return nil, err
	}
	if opts == nil {
		return nil, nil
	}
	if err := store.ValidateSelect(opts.Select); err != nil {
		return nil, err
	}
	return opts.Select, nil
}

// FilterBytes is the length of a $filter as it travels in the URL:
// percent-encoded, a space as "+".
func FilterBytes(filter string) int {
	n := 0
	for i := 0; i < len(filter); i++ {
		c := filter[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == ' ':
			n++
		default:
			n += 3
		}
	}
	return n
}

// ValidateFilterLength checks that a $filter fits store.MaxFilterBytes
// once percent-encoded.
func ValidateFilterLength(filter string) error {
	if n := FilterBytes(filter); n > store.MaxFilterBytes {
		return invalid("$filter is %d bytes long percent-encoded (%d characters): the limit is %d bytes, so that the request line fits the service's 16 KiB header limit",
			n, utf8.RuneCountInString(filter), store.MaxFilterBytes)
	}
	return nil
}

// WithoutIgnored returns props without the properties the service ignores
// on a write (store.IgnoredOnWrite): props itself when it has none, else a
// copy. A backend stores what it returns.
func WithoutIgnored(props map[string]any) map[string]any {
	if _, ok := props[store.TimestampProperty]; !ok {
		return props
	}
	c := make(map[string]any, len(props)-1)
	for k, v := range props {
		if !store.IgnoredOnWrite(k) {
			c[k] = v
		}
	}
	return c
}

// WithoutIgnoredActions returns actions with WithoutIgnored applied to
// each one's Entity.Properties: actions itself when none has such a
// property, else a copy (the callers' maps are never changed).
func WithoutIgnoredActions(actions []store.Action) []store.Action {
	var out []store.Action
	for i := range actions {
		if _, ok := actions[i].Entity.Properties[store.TimestampProperty]; !ok {
			continue
		}
		if out == nil {
			out = append([]store.Action(nil), actions...)
		}
		out[i].Entity.Properties = WithoutIgnored(out[i].Entity.Properties)
	}
	if out == nil {
		return actions
	}
	return out
}
