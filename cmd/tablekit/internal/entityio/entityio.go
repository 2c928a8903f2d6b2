// Package entityio reads and writes entities as JSON lines (one entity
// object a line, typed with "@odata.type" annotations as the Table service
// writes them) and as CSV with a typed header (Name:Edm.Int64).
package entityio

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// AppendJSON appends e as one JSON object: keys, then Timestamp and
// odata.etag when withMeta and set, then every property in name order
// with its annotation where JSON alone would lose the type (Int64,
// DateTime at 100 ns, Guid, Binary, and every Double, whole ones as 1.0).
func AppendJSON(dst []byte, e *store.Entity, withMeta bool) ([]byte, error) {
	dst = wire.AppendEntityStart(dst, e.PartitionKey, e.RowKey)
	if withMeta {
		if !e.Timestamp.IsZero() {
			dst = append(dst, `,"Timestamp":"`...)
			dst = wire.AppendTime(dst, e.Timestamp)
			dst = append(dst, '"')
		}
		if e.ETag != "" {
			dst = append(dst, `,"odata.etag":`...)
			dst = wire.AppendString(dst, string(e.ETag))
		}
	}
	names := make([]string, 0, len(e.Properties))
	for k := range e.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	var err error
	for _, k := range names {
		if dst, err = wire.AppendProperty(dst, k, e.Properties[k]); err != nil {
			return dst, err
		}
	}
	return wire.AppendEntityEnd(dst), nil
}

// DecodeJSON reads one entity object. Timestamp and odata.etag, when
// present, are kept in the entity's Timestamp and ETag.
func DecodeJSON(line []byte) (store.Entity, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return store.Entity{}, errors.New("not a JSON object: an entity is one {...} per line")
	}
	e, err := wire.DecodeEntity(line)
	if err != nil {
		return e, err
	}
	for k := range e.Properties {
		if err := store.ValidatePropertyName(k); err != nil {
			return e, err
		}
	}
	return e, nil
}

// Column is one CSV column: a property name and its EDM type.
type Column struct {
	Name string
	Type store.EdmType
}

// String is the header cell: Name:Edm.Type.
func (c Column) String() string { return c.Name + ":" + string(c.Type) }

// Columns returns the typed columns the entities need, sorted by name then
// type: a property stored with two types in different rows gets two
// columns.
func Columns(es []store.Entity) ([]Column, error) {
	seen := map[Column]bool{}
	var cols []Column
	for i := range es {
		for k, v := range es[i].Properties {
			t, err := store.TypeOf(v)
			if err != nil {
				return nil, err
			}
			c := Column{k, t}
			if !seen[c] {
				seen[c] = true
				cols = append(cols, c)
			}
		}
	}
	slices.SortFunc(cols, func(a, b Column) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(string(a.Type), string(b.Type))
	})
	return cols, nil
}

// CSVWriter writes entities under a typed header:
// PartitionKey,RowKey[,Timestamp,ETag],Name:Edm.Type,... An empty cell is a
// property the entity does not have, so an empty Edm.String does not
// survive CSV (JSON lines keep it).
type CSVWriter struct {
	w        *csv.Writer
	cols     []Column
	withMeta bool
}

// NewCSVWriter writes the header and returns the writer.
func NewCSVWriter(w io.Writer, cols []Column, withMeta bool) (*CSVWriter, error) {
	cw := &CSVWriter{w: csv.NewWriter(w), cols: cols, withMeta: withMeta}
	head := []string{"PartitionKey", "RowKey"}
	if withMeta {
		head = append(head, "Timestamp", "ETag")
	}
	for _, c := range cols {
		head = append(head, c.String())
	}
	return cw, cw.w.Write(head)
}

// Write writes one entity.
func (cw *CSVWriter) Write(e *store.Entity) error {
	rec := []string{e.PartitionKey, e.RowKey}
	if cw.withMeta {
		ts := ""
		if !e.Timestamp.IsZero() {
			ts = string(wire.AppendTime(nil, e.Timestamp))
		}
		rec = append(rec, ts, string(e.ETag))
	}
	for _, c := range cw.cols {
		v, ok := e.Properties[c.Name]
		cell := ""
		if ok && v != nil {
			if t, _ := store.TypeOf(v); t == c.Type {
				cell = FormatValue(v)
			}
		}
		rec = append(rec, cell)
	}
	return cw.w.Write(rec)
}

// Flush flushes the underlying csv.Writer and returns its error.
func (cw *CSVWriter) Flush() error {
	cw.w.Flush()
	return cw.w.Error()
}

// FormatValue formats a property value as text: a Double as the service
// writes it (1.0, NaN, Infinity), a DateTime with 7 fractional digits, a
// Binary in standard base64.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case bool:
		return strconv.FormatBool(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		s := string(wire.AppendDouble(nil, x))
		return strings.Trim(s, `"`)
	case time.Time:
		return string(wire.AppendTime(nil, x))
	case store.GUID:
		return x.String()
	}
	return fmt.Sprint(v)
}

// ParseValue parses text as a value of type t.
func ParseValue(t store.EdmType, s string) (any, error) {
	switch t {
	case store.EdmString:
		return s, nil
	case store.EdmBinary:
		return base64.StdEncoding.DecodeString(s)
	case store.EdmBoolean:
		return strconv.ParseBool(s)
	case store.EdmInt32:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case store.EdmInt64:
		return strconv.ParseInt(s, 10, 64)
	case store.EdmDouble:
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return strconv.ParseFloat(s, 64)
	case store.EdmDateTime:
		return wire.ParseTime([]byte(s))
	case store.EdmGuid:
		return store.ParseGUID(s)
	}
	return nil, fmt.Errorf("unknown type %q", t)
}

// CSVReader reads entities written by CSVWriter.
type CSVReader struct {
	r    *csv.Reader
	cols []Column // nil for the key and meta columns
	line int
}

// NewCSVReader reads and checks the header.
func NewCSVReader(r io.Reader) (*CSVReader, error) {
	cr := &CSVReader{r: csv.NewReader(r)}
	cr.r.FieldsPerRecord = 0
	cr.r.ReuseRecord = false
	head, err := cr.r.Read()
	if err != nil {
		return nil, &LineError{Line: 1, Err: fmt.Errorf("reading the CSV header: %w", err)}
	}
	cr.line = 1
	if len(head) < 2 || head[0] != "PartitionKey" || head[1] != "RowKey" {
		return nil, &LineError{Line: 1, Err: errors.New("the CSV header must start with PartitionKey,RowKey")}
	}
	for i, h := range head {
		if i < 2 {
			cr.cols = append(cr.cols, Column{})
			continue
		}
		if h == "Timestamp" || h == "ETag" {
			cr.cols = append(cr.cols, Column{Name: h})
			continue
		}
		name, typ, ok := strings.Cut(h, ":")
		if !ok {
			return nil, &LineError{Line: 1, Err: fmt.Errorf("column %d (%q) has no type: write it Name:Edm.Type, e.g. %s:Edm.String", i+1, h, h)}
		}
		t := store.EdmType(typ)
		if _, err := ParseValue(t, ""); err != nil && strings.HasPrefix(err.Error(), "unknown type") {
			return nil, &LineError{Line: 1, Err: fmt.Errorf("column %d (%q): %q is not an EDM type (Edm.String, Edm.Binary, Edm.Boolean, Edm.Int32, Edm.Int64, Edm.Double, Edm.DateTime, Edm.Guid)", i+1, h, typ)}
		}
		if err := store.ValidatePropertyName(name); err != nil {
			return nil, &LineError{Line: 1, Err: fmt.Errorf("column %d: %w", i+1, err)}
		}
		cr.cols = append(cr.cols, Column{Name: name, Type: t})
	}
	return cr, nil
}

// Read returns the next entity and its line number; io.EOF at the end.
func (cr *CSVReader) Read() (store.Entity, int, error) {
	rec, err := cr.r.Read()
	line, _ := cr.r.FieldPos(0)
	if err == io.EOF {
		return store.Entity{}, 0, io.EOF
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return store.Entity{}, pe.StartLine, &LineError{Line: pe.StartLine, Err: pe.Err}
		}
		return store.Entity{}, line, &LineError{Line: line, Err: err}
	}
	e := store.Entity{PartitionKey: rec[0], RowKey: rec[1]}
	for i := 2; i < len(rec); i++ {
		c := cr.cols[i]
		cell := rec[i]
		if cell == "" {
			continue
		}
		switch {
		case c.Type == "" && c.Name == "Timestamp":
			t, err := wire.ParseTime([]byte(cell))
			if err != nil {
				return e, line, &LineError{Line: line, Err: fmt.Errorf("column Timestamp: %v", err)}
			}
			e.Timestamp = t
			continue
		case c.Type == "" && c.Name == "ETag":
			e.ETag = store.ETag(cell)
			continue
		}
		v, err := ParseValue(c.Type, cell)
		if err != nil {
			return e, line, &LineError{Line: line, Err: fmt.Errorf("column %s: %q is not a valid %s: %v", c, cell, c.Type, unwrapNum(err))}
		}
		if e.Properties == nil {
			e.Properties = map[string]any{}
		}
		if _, dup := e.Properties[c.Name]; dup {
			return e, line, &LineError{Line: line, Err: fmt.Errorf("property %s has values in two columns", c.Name)}
		}
		e.Properties[c.Name] = v
	}
	return e, line, nil
}

func unwrapNum(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

// LineError is a bad input line: its number (1-based) and the rule it
// breaks.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Record is one entity read from an input, with its line number.
type Record struct {
	Line   int
	Entity store.Entity
}

// Parse reads every entity of a JSON lines ("jsonl") or CSV ("csv") input
// held in memory, without copying it. Each entity is checked with the
// service's rules (store.ValidateEntity); the first bad line stops the
// read with a *LineError naming it. Blank lines of JSON lines are skipped.
func Parse(data []byte, format string) ([]Record, error) {
	check := func(line int, e *store.Entity) error {
		if err := store.ValidateEntity(e); err != nil {
			return &LineError{Line: line, Err: err}
		}
		return nil
	}
	switch format {
	case "jsonl", "json", "":
		out := make([]Record, 0, bytes.Count(data, []byte{'\n'})+1)
		line := 0
		for len(data) > 0 {
			line++
			var l []byte
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				l, data = data[:i], data[i+1:]
			} else {
				l, data = data, nil
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			e, err := DecodeJSON(l)
			if err != nil {
				return out, &LineError{Line: line, Err: err}
			}
			if err := check(line, &e); err != nil {
				return out, err
			}
			out = append(out, Record{Line: line, Entity: e})
		}
		return out, nil
	case "csv":
		cr, err := NewCSVReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		var out []Record
		for {
			e, line, err := cr.Read()
			if err == io.EOF {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			if err := check(line, &e); err != nil {
				return out, err
			}
			out = append(out, Record{Line: line, Entity: e})
		}
	}
	return nil, fmt.Errorf("unknown format %q: use jsonl or csv", format)
}
