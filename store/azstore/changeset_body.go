package azstore

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// batchBuffer holds the two buffers of a changeset body: the body and the
// scratch one entity is encoded into. Bodies reach hundreds of KiB, so
// they are reused (only once the service has answered 202: by then the
// transport has read the whole body).
type batchBuffer struct {
	body, entity []byte
}

var batchBuffers = sync.Pool{New: func() any {
	return &batchBuffer{body: make([]byte, 0, 64*1024), entity: make([]byte, 0, 1024)}
}}

// changesetBody writes the $batch request of a transaction on table: one
// changeset holding a sub-request per action, each entity encoded once by
// store/wire (straight from its Source when set), and returns it with the
// request's Content-Type. The sub-requests are those aztables writes:
// POST for an insert, PATCH for a merge, PUT for a replace, DELETE, with
// the keys in the URL as OData literals (a quote doubled), percent-encoded.
// A body of 64 KiB or more is written in ASCII (see tablePolicy).
func (h *tableHandle) changesetBody(bp *batchBuffer, table string, actions []store.Action) ([]byte, string, error) {
	body, ct, err := h.writeChangeset(bp, table, actions, false)
	if err == nil && len(body) >= asciiThreshold && !isASCII(body) {
		body, ct, err = h.writeChangeset(bp, table, actions, true)
	}
	return body, ct, err
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// boundary returns a fresh random boundary with prefix.
func boundary(prefix string) string {
	b := make([]byte, 0, len(prefix)+32)
	b = append(b, prefix...)
	for _, x := range [2]uint64{rand.Uint64(), rand.Uint64()} {
		for i := 0; i < 16; i++ {
			b = append(b, hexDigits[x>>(4*i)&15])
		}
	}
	return string(b)
}

func (h *tableHandle) writeChangeset(bp *batchBuffer, table string, actions []store.Action, ascii bool) ([]byte, string, error) {
	batch, changeset := boundary("batch_"), boundary("changeset_")
	b := bp.body[:0]
	b = append(b, "--"...)
	b = append(b, batch...)
	b = append(b, "\r\nContent-Type: multipart/mixed; boundary="...)
	b = append(b, changeset...)
	b = append(b, "\r\n\r\n"...)
	base := h.s.tableURL
	for i := range actions {
		a := &actions[i]
		b = append(b, "--"...)
		b = append(b, changeset...)
		b = append(b, "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"...)
		switch a.Kind {
		case store.ActionInsert:
			b = append(b, "POST "...)
		case store.ActionUpdateMerge, store.ActionUpsertMerge:
			b = append(b, "PATCH "...)
		case store.ActionUpdateReplace, store.ActionUpsertReplace:
			b = append(b, "PUT "...)
		case store.ActionDelete:
			b = append(b, "DELETE "...)
		}
		b = append(b, base...)
		b = append(b, '/')
		b = append(b, table...)
		if a.Kind != store.ActionInsert {
			b = append(b, "(PartitionKey='"...)
			b = appendKeySegment(b, a.Entity.PartitionKey)
			b = append(b, "',RowKey='"...)
			b = appendKeySegment(b, a.Entity.RowKey)
			b = append(b, "')"...)
		}
		b = append(b, " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nDataServiceVersion: 3.0\r\n"...)
		if a.Kind.NeedsIfMatch() {
			b = append(b, "If-Match: "...)
			b = append(b, a.IfMatch...)
			b = append(b, "\r\n"...)
		}
		if a.Kind == store.ActionDelete {
			b = append(b, "\r\n\r\n"...)
			continue
		}
		var err error
		e := bp.entity[:0]
		if a.Source != nil {
			e, err = wire.AppendSource(e, a.Entity.PartitionKey, a.Entity.RowKey, a.Source, true)
		} else {
			e, err = wire.AppendEntity(e, &a.Entity)
			if err != nil {
				err = store.Errorf(store.CodeInvalidValueType, 400, "%v", err)
			}
		}
		bp.entity = e[:0]
		if err != nil {
			bp.body = b[:0]
			return nil, "", store.WithIndex(err, i)
		}
		if ascii {
			e = asciiJSON(e)
		}
		if a.Kind == store.ActionInsert {
			b = append(b, "Prefer: return-no-content\r\n"...)
		}
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(e)), 10)
		b = append(b, "\r\n\r\n"...)
		b = append(b, e...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "--"...)
	b = append(b, changeset...)
	b = append(b, "--\r\n\r\n--"...)
	b = append(b, batch...)
	b = append(b, "--\r\n"...)
	bp.body = b[:0]
	if len(b) >= store.MaxBatchBytes {
		err := store.Errorf(store.CodeRequestBodyTooLarge, 413,
			"transaction body of %d bytes is over the service's limit of %d bytes", len(b), store.MaxBatchBytes)
		err.Source = store.SourceClient // refused here: nothing was sent
		return nil, "", err
	}
	return b, "multipart/mixed; boundary=" + batch, nil
}

// appendKeySegment appends a key as it goes inside the quotes of an entity
// URL: each quote doubled (an OData literal), then percent-encoded as
// url.PathEscape encodes a path segment.
func appendKeySegment(dst []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '_', c == '.', c == '~',
			c == '$', c == '&', c == '+', c == ':', c == '=', c == '@':
			dst = append(dst, c)
		case c == '\'':
			dst = append(dst, "%27%27"...)
		default:
			dst = append(dst, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
	}
	return dst
}
