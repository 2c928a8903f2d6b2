package store

import (
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store/internal/quote"

	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The service's limits. docs/limits.md cites the source of each.
const (
	// MinTableNameLen and MaxTableNameLen bound a table name.
	MinTableNameLen = 3
	MaxTableNameLen = 63
	// MaxKeyUnits is the longest PartitionKey or RowKey, in UTF-16 code units (1 KiB of characters).
	MaxKeyUnits = 1024
	// MaxCustomProperties is the most properties an entity may carry besides
	// PartitionKey, RowKey and Timestamp.
	MaxCustomProperties = 252
	// MaxPropertyNameUnits is the longest property name, in UTF-16 code units.
	MaxPropertyNameUnits = 255
	// MaxStringUnits is the longest Edm.String value in UTF-16 code units.
	// The documented limit is 64 KiB; Azure was seen refusing a value of
	// exactly 32,768 units (64 KiB of UTF-16), so the largest accepted value
	// is one unit shorter.
	MaxStringUnits = 32*1024 - 1
	// MaxBinaryBytes is the largest Edm.Binary value, 64 KiB.
	MaxBinaryBytes = 64 * 1024
	// MaxEntitySize is the largest entity by the service's size formula, 1 MiB.
	MaxEntitySize = 1024 * 1024
	// MaxBatchActions is the most actions in one entity group transaction.
	MaxBatchActions = 100
	// MaxBatchBytes bounds a transaction's request body: it must stay under 4 MiB.
	MaxBatchBytes = 4 * 1024 * 1024
	// MaxPageSize is the most entities (or tables) one page returns, and the largest $top.
	MaxPageSize = 1000
	// MaxFilterComparisons is the most discrete comparisons in one $filter.
	MaxFilterComparisons = 15
	// MaxFilterBytes is the longest $filter, in bytes as it travels
	// percent-encoded in the request URL. A query's request line must fit
	// the 16 KiB header limit of the front ends (Azurite, on Node.js,
	// answers 431 beyond it; HTTP.sys's default is the same size), with
	// room for the path, the other query options and the headers.
	MaxFilterBytes = 12 * 1024
)

// utf16Len counts the UTF-16 code units of s, the unit the service
// measures strings in (see keys.UTF16Len).
func utf16Len(s string) int { return keys.UTF16Len(s) }

// UTF16Len reports the length of s in UTF-16 code units.
func UTF16Len(s string) int { return utf16Len(s) }

// quoteTrunc quotes s for an error message, cutting long values so errors
// stay readable (quote.Trunc, which store/driver shares).
func quoteTrunc(s string) string { return quote.Trunc(s) }

// ValidateTableName checks a table name: 3 to 63 characters, a letter then
// letters and digits, and not the reserved name "tables".
func ValidateTableName(name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		isLetter := (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		isDigit := c >= '0' && c <= '9'
		if !(isLetter || (isDigit && i > 0)) {
			return refuse(CodeInvalidResourceName, 400,
				"table name %s: character %q at offset %d is not allowed (a letter, then letters and digits)", quoteTrunc(name), c, i)
		}
	}
	if len(name) < MinTableNameLen || len(name) > MaxTableNameLen {
		return refuse(CodeOutOfRangeInput, 400,
			"table name %s is %d characters long: the length must be %d to %d", quoteTrunc(name), len(name), MinTableNameLen, MaxTableNameLen)
	}
	if strings.EqualFold(name, "tables") {
		return refuse(CodeInvalidInput, 400, "table name %q is reserved by the service", name)
	}
	return nil
}

// keyRuleCode is the code for a forbidden character in a key: the service
// answers OutOfRangeInput for a single operation and InvalidInput inside a batch.
func validateKey(which, v string, inBatch bool) error {
	if keyASCIIOK(v) {
		return nil
	}
	return checkKey(which, v, inBatch)
}

// checkKey is validateKey's full check, which names what is wrong.
func checkKey(which, v string, inBatch bool) error {
	if !utf8.ValidString(v) {
		return invalid("%s %s is not valid UTF-8", which, quoteTrunc(v))
	}
	if n := utf16Len(v); n > MaxKeyUnits {
		return refuse(CodeKeyValueTooLarge, 400,
			"%s %s is %d UTF-16 code units long: the limit is %d", which, quoteTrunc(v), n, MaxKeyUnits)
	}
	code := CodeOutOfRangeInput
	if inBatch {
		code = CodeInvalidInput
	}
	for i, r := range v {
		switch {
		case r == '/' || r == '\\' || r == '#' || r == '?':
			return refuse(code, 400, "%s %s contains %q at offset %d: '/', '\\', '#' and '?' are not allowed in keys", which, quoteTrunc(v), r, i)
		case r <= 0x1F || (r >= 0x7F && r <= 0x9F):
			return refuse(code, 400, "%s %s contains control character U+%04X at offset %d: control characters are not allowed in keys", which, quoteTrunc(v), r, i)
		}
	}
	return nil
}

// keyASCIIOK reports, in one pass, that v is a valid key made of ASCII
// alone (one UTF-16 unit a byte). false sends validateKey down its full
// checks, which also say what is wrong.
func keyASCIIOK(v string) bool {
	if len(v) > MaxKeyUnits {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c <= 0x1F || c >= 0x7F, c == '/', c == '\\', c == '#', c == '?':
			return false
		}
	}
	return true
}

// ValidateKeys checks a PartitionKey and a RowKey: at most 1,024 UTF-16
// units, valid UTF-8, and none of / \ # ? or control characters. An empty
// key is valid.
func ValidateKeys(pk, rk string) error {
	if err := validateKey("PartitionKey", pk, false); err != nil {
		return err
	}
	return validateKey("RowKey", rk, false)
}

// TimestampProperty is the name of the one system property the service
// accepts among a write's properties: it answers such a write as any other
// (204) and keeps its own Timestamp, ignoring the value sent. Every backend
// does the same: a property of this name in an Entity's Properties, or
// written by a PropertySource, is accepted whatever its value, is not
// counted toward MaxCustomProperties or the entity's size, and is not
// stored (azstore leaves it out of the request). ValidatePropertyName still
// refuses it as the name of a custom property: nothing can be stored under
// it.
const TimestampProperty = "Timestamp"

// IgnoredOnWrite reports a property name the service accepts in a write
// and ignores: TimestampProperty.
func IgnoredOnWrite(name string) bool { return name == TimestampProperty }

// reserved names a custom property may not take.
func reservedName(name string) bool {
	switch name {
	case "PartitionKey", "RowKey", "Timestamp", "ETag", "odata.etag":
		return true
	}
	return false
}

// ValidatePropertyName checks one custom property name: a C# identifier (a
// letter or '_', then letters, digits or '_'), at most 255 characters, and
// not one of the reserved system names.
func ValidatePropertyName(name string) error {
	if n := utf16Len(name); n > MaxPropertyNameUnits {
		return refuse(CodePropertyNameTooLong, 400,
			"property name %s is %d characters long: the limit is %d", quoteTrunc(name), n, MaxPropertyNameUnits)
	}
	if name == "" {
		return refuse(CodePropertyNameInvalid, 400, "property name is empty")
	}
	if !utf8.ValidString(name) {
		return refuse(CodePropertyNameInvalid, 400, "property name %s is not valid UTF-8", quoteTrunc(name))
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))
		if !ok {
			return refuse(CodePropertyNameInvalid, 400,
				"property name %s: character %q at offset %d is not allowed (a letter or '_', then letters, digits or '_')", quoteTrunc(name), r, i)
		}
	}
	if reservedName(name) {
		return refuse(CodePropertyNameInvalid, 400,
			"property name %q is reserved for a system property: set the Entity field instead", name)
	}
	return nil
}

// ValidateValue checks one property value: its Go type is one of the
// closed set and it is within its type's limits.
func ValidateValue(name string, v any) error {
	switch x := v.(type) {
	case nil, bool, int32, int64, float64, GUID:
		return nil
	case string:
		_, err := checkString(name, x)
		return err
	case []byte:
		return checkBinary(name, len(x))
	case time.Time:
		return checkTime(name, x)
	default:
		return refuse(CodeInvalidValueType, 400,
			"property %q: unsupported Go type %T (use string, []byte, bool, int32, int64, float64, time.Time or store.GUID)", name, v)
	}
}

// valueSize is a value's size in the service's entity size formula.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return 2*utf16Len(x) + 4
	case []byte:
		return len(x) + 4
	case bool:
		return 1
	case int32:
		return 4
	case int64, float64, time.Time:
		return 8
	case GUID:
		return 16
	}
	return 0
}

// EntitySize is an entity's size by the formula the Azure Storage team
// published: 4 + 2*len(PartitionKey+RowKey) + for each non-nil property
// (8 + 2*len(name) + the value's size), lengths in UTF-16 code units.
func EntitySize(e *Entity) int {
	n := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	for k, v := range e.Properties {
		if v == nil || IgnoredOnWrite(k) {
			continue
		}
		n += 8 + 2*utf16Len(k) + valueSize(v)
	}
	return n
}

// ValidateEntity checks everything the service checks about an entity on
// a write: keys, property count, names, types, value limits and total size.
// Nil properties are not stored and do not count; nor does a property named
// Timestamp, which the service accepts and ignores (TimestampProperty).
func ValidateEntity(e *Entity) error {
	return validateEntity(e, false)
}

func validateEntity(e *Entity, inBatch bool) error {
	_, err := checkEntity(e, inBatch)
	return err
}

// checkEntity validates e in one pass over its properties and returns its
// estimated wire size (see EstimateWireSize) for the transaction checks.
func checkEntity(e *Entity, inBatch bool) (wire int, err error) {
	if err := validateKey("PartitionKey", e.PartitionKey, inBatch); err != nil {
		return 0, err
	}
	if err := validateKey("RowKey", e.RowKey, inBatch); err != nil {
		return 0, err
	}
	count := 0
	size := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	wire = 64 + jsonStringLen(e.PartitionKey) + jsonStringLen(e.RowKey)
	for name, v := range e.Properties {
		if v == nil || IgnoredOnWrite(name) {
			// Not stored; a Timestamp is ignored as the service ignores it.
			continue
		}
		count++
		if err := ValidatePropertyName(name); err != nil {
			return 0, inEntity(e, err)
		}
		if err := ValidateValue(name, v); err != nil {
			return 0, inEntity(e, err)
		}
		size += 8 + 2*utf16Len(name) + valueSize(v)
		wire += propertyWireSize(name, v)
	}
	if count > MaxCustomProperties {
		return 0, refuse(CodeTooManyProperties, 400,
			"entity (%s, %s) has %d properties: the limit is %d custom properties", quoteTrunc(e.PartitionKey), quoteTrunc(e.RowKey), count, MaxCustomProperties)
	}
	if size > MaxEntitySize {
		return 0, refuse(CodeEntityTooLarge, 400,
			"entity (%s, %s) is %d bytes by the service's size formula: the limit is %d", quoteTrunc(e.PartitionKey), quoteTrunc(e.RowKey), size, MaxEntitySize)
	}
	return wire, nil
}

// inEntity prefixes a property error's message with the entity's keys, so
// that the message names the offending entity as well as the property and
// the limit (a bulk write or a transaction carries many entities).
func inEntity(e *Entity, err error) error {
	se, ok := err.(*Error)
	if !ok {
		return err
	}
	se.Message = fmt.Sprintf("entity (%s, %s): %s", quoteTrunc(e.PartitionKey), quoteTrunc(e.RowKey), se.Message)
	return se
}

// ValidateETag checks an If-Match value: "*" or a quoted entity tag,
// optionally weak (W/"..."). An empty ETag is refused: pass ETagAny to
// write unconditionally.
func ValidateETag(t ETag) error {
	s := string(t)
	if s == "" {
		return invalid("If-Match is empty: pass the ETag that was read, or store.ETagAny for an unconditional write")
	}
	if t == ETagAny {
		return nil
	}
	body := strings.TrimPrefix(s, "W/")
	if len(body) < 2 || body[0] != '"' || body[len(body)-1] != '"' || strings.Contains(body[1:len(body)-1], `"`) {
		return invalid("ETag %s is malformed: want \"*\", \"...\" or W/\"...\"", quoteTrunc(s))
	}
	return nil
}

// ValidateTop checks a $top value: 0 (no cap) or 1 to 1,000.
func ValidateTop(top int) error {
	if top < 0 || top > MaxPageSize {
		return invalid("$top %d is out of range: it must be 1 to %d", top, MaxPageSize)
	}
	return nil
}

// ValidateSelect checks the property names of a $select.
func ValidateSelect(names []string) error {
	for _, n := range names {
		switch n {
		case "PartitionKey", "RowKey", "Timestamp":
			continue
		}
		if err := ValidatePropertyName(n); err != nil {
			return err
		}
	}
	return nil
}

// EstimateWireSize is an upper estimate of the bytes an entity takes in a
// JSON request body with full type annotations, used to keep transactions
// under the service's 4 MiB body limit.
func EstimateWireSize(e *Entity) int {
	n := 64 + jsonStringLen(e.PartitionKey) + jsonStringLen(e.RowKey)
	for k, v := range e.Properties {
		if v != nil && !IgnoredOnWrite(k) {
			n += propertyWireSize(k, v)
		}
	}
	return n
}

// propertyWireSize bounds one property's bytes in a JSON body, its type
// annotation included.
func propertyWireSize(k string, v any) int {
	n := jsonStringLen(k) + 2
	switch x := v.(type) {
	case string:
		n += jsonStringLen(x)
	case []byte:
		n += (len(x)+2)/3*4 + 2 + annotationLen(k)
	case bool:
		n += 5
	case int32:
		n += 11
	case int64:
		n += 22 + annotationLen(k)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			n += 11 + annotationLen(k)
		} else {
			n += 24 + annotationLen(k)
		}
	case time.Time:
		n += 30 + annotationLen(k)
	case GUID:
		n += 38 + annotationLen(k)
	}
	return n
}

// batchActionOverhead bounds the multipart framing and request line of one
// action in a transaction body.
const batchActionOverhead = 512

func annotationLen(name string) int {
	return jsonStringLen(name) + len(`"@odata.type":"Edm.DateTime",`)
}

// jsonStringLen bounds a string's bytes in a JSON body, quotes included.
// A character outside ASCII counts as its \uXXXX escapes (6 bytes per
// UTF-16 unit): azstore writes large bodies in ASCII (Azurite corrupts a
// character split across its 64 KiB read chunks), so that is what the
// service receives and measures against its 4 MiB limit. '<', '>' and '&'
// count 6 too: the SDK re-encodes bodies with encoding/json, which writes
// them as \u003c, \u003e and \u0026.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		case c < 0x80:
			n++
		case c >= 0xF0:
			n += 12 // the lead byte of a supplementary character: two escapes
		case c >= 0xC0:
			n += 6 // the lead byte of a BMP character
		}
		// Continuation bytes (0x80-0xBF) add nothing.
	}
	return n
}

// ActionWireSize estimates one transaction action's share of the body: the
// multipart framing, the sub-request URL with both keys and the entity's
// JSON (none for a delete).
func ActionWireSize(a *Action) int {
	n := ActionFraming(a)
	if a.Kind == ActionDelete {
		return n
	}
	if a.Source != nil {
		if w, err := WriteSource(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, true, nil); err == nil {
			return n + w
		}
	}
	return n + EstimateWireSize(&a.Entity)
}

// ActionFraming is the part of ActionWireSize that is not the entity: the
// multipart framing and the sub-request URL with both keys. A backend that
// learns an entity's size as it writes it (WriteSourceSized) adds the two.
func ActionFraming(a *Action) int {
	return batchActionOverhead + urlKeyLen(a.Entity.PartitionKey) + urlKeyLen(a.Entity.RowKey)
}

// CheckTransactionBytes refuses a transaction whose body is about size
// bytes (the sum of its actions' ActionWireSize) at the service's 4 MiB
// limit, with RequestBodyTooLarge (413).
func CheckTransactionBytes(size int) error {
	if size >= MaxBatchBytes {
		return refuse(CodeRequestBodyTooLarge, 413,
			"transaction body of about %d bytes is over the service's limit of %d bytes", size, MaxBatchBytes)
	}
	return nil
}

// urlKeyLen bounds a key's bytes in a sub-request URL, where it appears
// quoted as an OData literal and percent-encoded: a quote is doubled, and
// every byte but an unreserved ASCII character takes three.
func urlKeyLen(k string) int {
	n := 0
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
			n++
		case c == '\'':
			n += 6
		default:
			n += 3
		}
	}
	return n
}

// ValidateAction checks one action as the service checks it inside a
// transaction: a known kind, valid keys (a forbidden character is
// InvalidInput there), a valid entity for writes and an If-Match for updates
// and deletes. It is the per-action part of ValidateTransaction, for callers
// such as the bulk writer that vet writes one by one before grouping them.
func ValidateAction(a *Action) error {
	_, err := checkAction(a)
	return err
}

// checkAction validates a and returns its estimated share of a body.
func checkAction(a *Action) (wire int, err error) {
	if a.Kind < ActionInsert || a.Kind > ActionDelete {
		return 0, invalid("unknown action kind %d", int(a.Kind))
	}
	if a.Kind == ActionDelete {
		if err := validateKey("PartitionKey", a.Entity.PartitionKey, true); err != nil {
			return 0, err
		}
		if err := validateKey("RowKey", a.Entity.RowKey, true); err != nil {
			return 0, err
		}
	} else if a.Source != nil {
		if a.Entity.Properties != nil {
			return 0, invalid("entity (%s, %s): an action has both Source and Entity.Properties: set one", quoteTrunc(a.Entity.PartitionKey), quoteTrunc(a.Entity.RowKey))
		}
		if wire, err = WriteSource(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, true, nil); err != nil {
			return 0, err
		}
	} else if wire, err = checkEntity(&a.Entity, true); err != nil {
		return 0, err
	}
	wire += urlKeyLen(a.Entity.PartitionKey) + urlKeyLen(a.Entity.RowKey)
	if a.Kind.NeedsIfMatch() {
		if err := ValidateETag(a.IfMatch); err != nil {
			return 0, err
		}
	}
	return wire, nil
}

// ValidateTransaction checks an entity group transaction before anything
// is written: 1 to 100 actions, one PartitionKey, each RowKey at most once,
// every entity and If-Match valid, and the body under 4 MiB. The returned
// *Error carries the index of the offending action. Of an action with a
// Source it checks the kind, keys and If-Match: its properties are checked
// as the backend writes them through WriteSource, and the body's size where
// the backend builds it (WithAllProperties, then ValidateTransaction again,
// for a backend that wants Entity values).
func ValidateTransaction(actions []Action) error {
	if len(actions) == 0 {
		return invalid("a transaction needs at least one action")
	}
	if len(actions) > MaxBatchActions {
		return invalid("a transaction of %d actions exceeds the maximum %d changes per change set", len(actions), MaxBatchActions)
	}
	pk := actions[0].Entity.PartitionKey
	seen := make(map[string]int, len(actions))
	size := 0
	for i := range actions {
		a := &actions[i]
		if a.Entity.PartitionKey != pk {
			return WithIndex(refuse(CodeCommandsInBatchActOnDifferentPartitions, 400,
				"action %d is on PartitionKey %s but action 0 is on %s: a transaction covers one partition", i, quoteTrunc(a.Entity.PartitionKey), quoteTrunc(pk)), i)
		}
		if j, dup := seen[a.Entity.RowKey]; dup {
			return WithIndex(refuse(CodeInvalidDuplicateRow, 400,
				"RowKey %s appears in actions %d and %d: an entity may appear once per transaction", quoteTrunc(a.Entity.RowKey), j, i), i)
		}
		seen[a.Entity.RowKey] = i
		if a.Source != nil {
			// Its properties are checked as the backend writes them
			// (WriteSource), and the body's size where it is built.
			if err := checkSourceAction(a); err != nil {
				return WithIndex(err, i)
			}
			continue
		}
		wire, err := checkAction(a)
		if err != nil {
			return WithIndex(err, i)
		}
		size += batchActionOverhead + wire
	}
	return CheckTransactionBytes(size)
}

// checkSourceAction is checkAction for an action whose properties come
// from a Source, without writing them.
func checkSourceAction(a *Action) error {
	if a.Kind < ActionInsert || a.Kind >= ActionDelete {
		return invalid("an action of kind %s takes no Source", a.Kind)
	}
	if a.Entity.Properties != nil {
		return invalid("entity (%s, %s): an action has both Source and Entity.Properties: set one", quoteTrunc(a.Entity.PartitionKey), quoteTrunc(a.Entity.RowKey))
	}
	if err := validateKey("PartitionKey", a.Entity.PartitionKey, true); err != nil {
		return err
	}
	if err := validateKey("RowKey", a.Entity.RowKey, true); err != nil {
		return err
	}
	if a.Kind.NeedsIfMatch() {
		return ValidateETag(a.IfMatch)
	}
	return nil
}
