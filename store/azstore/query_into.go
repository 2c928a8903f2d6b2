package azstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/wire"
)

// QueryInto implements store.TypedTable: the page Query would return, sent
// by the same code (page), each entity of the service's answer read from
// its bytes once, straight into the reader next returns. Each entity
// object is scanned once: its keys and Timestamp, and the properties the
// filter compares, are decoded for the filter's check (Match, as Query
// applies it: Azurite matches loosely); its other members are kept as the
// scanner's views of the body and handed to the reader only when the
// entity matches, without building a store.Entity.
func (h *tableHandle) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	f, body, cont, err := h.page(ctx, q)
	if err != nil {
		return "", 0, err
	}
	pr := pageReaders.Get().(*pageReader)
	defer pr.release()
	pr.start(f, q.Select)
	n := 0
	var rerr error // the reader's own error, returned as it is
	err = wire.EachEntity(body, func(obj []byte) error {
		ok, err := pr.scan(obj)
		if err != nil || !ok {
			return err
		}
		if rerr = pr.read(next()); rerr != nil {
			return rerr
		}
		n++
		return nil
	})
	if err != nil {
		var me *wire.MalformedError
		if err == rerr && !errors.As(err, &me) {
			return "", 0, err
		}
		return "", 0, decodeErr(err, "query "+quote(h.name), false)
	}
	return cont, n, nil
}

// pageReader checks and reads the entities of one page for QueryInto.
type pageReader struct {
	f *filter.Filter
	// names are the custom properties the filter compares (sorted), sel
	// the projection asked for (none: every property).
	names, sel []string
	// view is the entity Match sees: keys, Timestamp and the compared
	// properties, decoded into scratch.
	view    store.Entity
	scratch map[string]any
	hasTS   bool
	etag    wire.Property
	hasETag bool
	// props are the entity's custom properties as scanned, views of the
	// body.
	props []wire.Property
}

var pageReaders = sync.Pool{New: func() any { return new(pageReader) }}

func (p *pageReader) start(f *filter.Filter, sel []string) {
	p.f, p.sel = f, sel
	p.names = f.Properties()
	if len(p.names) > 0 && p.scratch == nil {
		p.scratch = make(map[string]any, len(p.names))
	}
}

func (p *pageReader) release() {
	clear(p.props)
	p.props = p.props[:0]
	clear(p.scratch)
	*p = pageReader{props: p.props, scratch: p.scratch}
	pageReaders.Put(p)
}

// scan reads one entity object and reports whether it matches the filter.
func (p *pageReader) scan(obj []byte) (bool, error) {
	p.view = store.Entity{}
	p.hasTS, p.hasETag = false, false
	p.props = p.props[:0]
	if len(p.names) > 0 {
		clear(p.scratch)
		p.view.Properties = p.scratch
	}
	err := wire.Scan(obj, func(m wire.Property) error {
		var err error
		switch string(m.Name) {
		case "PartitionKey":
			p.view.PartitionKey, err = m.AsString()
		case "RowKey":
			p.view.RowKey, err = m.AsString()
		case "Timestamp":
			var t time.Time
			if t, err = m.AsTime(); err == nil {
				p.view.Timestamp, p.hasTS = t, true
			}
		case "odata.etag":
			p.etag, p.hasETag = m, true
		default:
			p.props = append(p.props, m)
			if len(p.names) > 0 {
				if i, found := slices.BinarySearch(p.names, string(m.Name)); found {
					var v any
					if v, err = m.Value(); err == nil {
						p.scratch[p.names[i]] = v
					}
				}
			}
		}
		return err
	})
	if err != nil {
		return false, err
	}
	return p.f.MatchesAll() || p.f.Match(&p.view), nil
}

// read hands the scanned entity to r: keys, Timestamp, ETag, then the
// properties (the selected ones only, when the query projects).
func (p *pageReader) read(r store.EntityReader) error {
	if err := r.SetPartitionKey(p.view.PartitionKey); err != nil {
		return err
	}
	if err := r.SetRowKey(p.view.RowKey); err != nil {
		return err
	}
	if p.hasTS {
		if err := r.SetTimestamp(p.view.Timestamp); err != nil {
			return err
		}
	}
	if p.hasETag {
		if err := wire.ReadProperty(p.etag, r); err != nil {
			return err
		}
	}
	for _, m := range p.props {
		if len(p.sel) > 0 && !slices.Contains(p.sel, string(m.Name)) {
			continue
		}
		if err := wire.ReadProperty(m, r); err != nil {
			return err
		}
	}
	return nil
}
