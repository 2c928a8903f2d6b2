package transfer

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"iter"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/store"
)

// PartitionSum is the count and checksum of one partition's rows.
type PartitionSum struct {
	PK       string `json:"pk"`
	Rows     int    `json:"rows"`
	Checksum string `json:"sha256"`
}

// summer computes per-partition counts and checksums over rows met in
// key order. The checksum is the SHA-256 of the rows' canonical JSON lines
// (keys and typed properties, no Timestamp or ETag), so two tables holding
// the same data have the same sums whatever their write times.
type summer struct {
	parts []PartitionSum
	h     hash.Hash
	buf   []byte
}

func (s *summer) add(e *store.Entity) error {
	if len(s.parts) == 0 || s.parts[len(s.parts)-1].PK != e.PartitionKey {
		s.close()
		s.parts = append(s.parts, PartitionSum{PK: e.PartitionKey})
		s.h = sha256.New()
	}
	var err error
	s.buf, err = entityio.AppendJSON(s.buf[:0], e, false)
	if err != nil {
		return err
	}
	s.h.Write(append(s.buf, '\n'))
	s.parts[len(s.parts)-1].Rows++
	return nil
}

func (s *summer) close() {
	if len(s.parts) > 0 && s.h != nil {
		s.parts[len(s.parts)-1].Checksum = hex.EncodeToString(s.h.Sum(nil))
		s.h = nil
	}
}

// ExportResult says what an export wrote.
type ExportResult struct {
	Rows       int
	Partitions []PartitionSum
}

// Export writes every entity q selects from t to w as JSON lines
// ("jsonl") or CSV ("csv"); withMeta adds Timestamp and ETag. CSV needs
// every row's columns before the header, so it holds the rows in memory.
func Export(ctx context.Context, t store.Table, q store.Query, format string, withMeta bool, w io.Writer, progress func(int)) (ExportResult, error) {
	return ExportSeq(store.All(ctx, t, q), format, withMeta, w, progress)
}

// ExportSeq is Export over any sequence of entities.
func ExportSeq(seq iter.Seq2[store.Entity, error], format string, withMeta bool, w io.Writer, progress func(int)) (ExportResult, error) {
	var res ExportResult
	var sum summer
	bw := bufio.NewWriterSize(w, 1<<16)
	switch format {
	case "jsonl", "json", "":
		var buf []byte
		for e, err := range seq {
			if err != nil {
				bw.Flush()
				return res, err
			}
			if err := sum.add(&e); err != nil {
				return res, err
			}
			if buf, err = entityio.AppendJSON(buf[:0], &e, withMeta); err != nil {
				return res, err
			}
			bw.Write(append(buf, '\n'))
			res.Rows++
			if progress != nil {
				progress(res.Rows)
			}
		}
	case "csv":
		var rows []store.Entity
		for e, err := range seq {
			if err != nil {
				return res, err
			}
			if err := sum.add(&e); err != nil {
				return res, err
			}
			rows = append(rows, e)
			if progress != nil {
				progress(len(rows))
			}
		}
		cols, err := entityio.Columns(rows)
		if err != nil {
			return res, err
		}
		cw, err := entityio.NewCSVWriter(bw, cols, withMeta)
		if err != nil {
			return res, err
		}
		for i := range rows {
			if err := cw.Write(&rows[i]); err != nil {
				return res, err
			}
		}
		if err := cw.Flush(); err != nil {
			return res, err
		}
		res.Rows = len(rows)
	default:
		return res, fmt.Errorf("unknown format %q: use jsonl or csv", format)
	}
	sum.close()
	res.Partitions = sum.parts
	return res, bw.Flush()
}
