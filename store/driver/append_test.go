package driver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// rangeOnly is a Container whose GetRange answers from data (or err); the
// other methods are not used by SettleAppend.
type rangeOnly struct {
	store.Container
	data  []byte
	err   error
	reads int
}

func (c *rangeOnly) GetRange(_ context.Context, name string, off, n int64) ([]byte, store.BlobProps, error) {
	c.reads++
	if c.err != nil {
		return nil, store.BlobProps{}, c.err
	}
	size := int64(len(c.data))
	if off >= size {
		return nil, store.BlobProps{}, RangeNotSatisfiable("c", name, off, size)
	}
	return c.data[off:min(size, off+n)], store.BlobProps{Size: size, Blocks: 7, ETag: `"e"`}, nil
}

// TestSettleAppend walks every branch of SettleAppend with scripted
// resend answers and read-backs.
func TestSettleAppend(t *testing.T) {
	lost := &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport, Message: "lost"}
	posTaken := store.Errorf(store.CodeAppendPositionConditionNotMet, 412, "taken")
	full := store.Errorf(store.CodeBlockCountExceedsLimit, 409, "full")
	gone := store.Errorf(store.CodeBlobNotFound, 404, "gone")
	busy := store.Errorf(store.CodeServerBusy, 503, "busy")
	block := []byte("BLOCK")
	for _, tc := range []struct {
		name     string
		noPos    bool
		resends  []error // the answers of the resends in order; nil is success
		blob     string  // the blob as read back
		readErr  error
		want     string // "done", "not applied", "unknown"
		code     string // the error's code when not done
		sends    int
		readBack bool
	}{
		{"no position", true, nil, "", nil, "unknown", store.CodeResponseLost, 0, false},
		{"resend lands", false, []error{nil}, "", nil, "done", "", 1, false},
		{"503 then lands", false, []error{busy, nil}, "", nil, "done", "", 2, false},
		{"taken, block there", false, []error{posTaken}, "headBLOCK", nil, "done", "", 1, true},
		{"taken, block there, more after", false, []error{posTaken}, "headBLOCKtail", nil, "done", "", 1, true},
		{"full, block there", false, []error{full}, "headBLOCK", nil, "done", "", 1, true},
		{"taken by another block", false, []error{posTaken}, "headOTHER", nil, "not applied", store.CodeAppendPositionConditionNotMet, 1, true},
		{"blob ends before", false, []error{posTaken}, "hea", nil, "not applied", store.CodeAppendPositionConditionNotMet, 1, true},
		{"blob ends inside the block", false, []error{posTaken}, "headBLO", nil, "not applied", store.CodeAppendPositionConditionNotMet, 1, true},
		{"read-back fails", false, []error{posTaken}, "", lost, "unknown", store.CodeResponseLost, 1, true},
		{"blob deleted", false, []error{gone}, "", nil, "unknown", store.CodeResponseLost, 1, false},
		{"every resend lost", false, []error{lost, lost, lost}, "", nil, "unknown", store.CodeResponseLost, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &rangeOnly{data: []byte(tc.blob), err: tc.readErr}
			opts := store.AppendOptions{AppendPosition: new(int64(4))}
			if tc.noPos {
				opts.AppendPosition = nil
			}
			sends := 0
			res, err := SettleAppend(context.Background(), c, "b", block, opts, lost, func(context.Context) (store.AppendResult, error) {
				sends++
				if sends > len(tc.resends) {
					t.Fatalf("resend %d: not scripted", sends)
				}
				if e := tc.resends[sends-1]; e != nil {
					return store.AppendResult{}, e
				}
				return store.AppendResult{Offset: 4, Size: 9, Blocks: 2}, nil
			})
			if sends != tc.sends || (c.reads > 0) != tc.readBack {
				t.Errorf("%d resends and %d reads, want %d resends and a read-back %v", sends, c.reads, tc.sends, tc.readBack)
			}
			switch tc.want {
			case "done":
				if err != nil || res.Offset != 4 || res.Size != 9 {
					t.Fatalf("got %+v, %v; want done at offset 4", res, err)
				}
			case "not applied":
				if store.Code(err) != tc.code || errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "not applied") {
					t.Fatalf("got %v; want %s, settled as not applied", err, tc.code)
				}
			case "unknown":
				if store.Code(err) != tc.code || !errors.Is(err, store.ErrUnknownOutcome) {
					t.Fatalf("got %v; want %s, unknown", err, tc.code)
				}
			}
		})
	}
}

// TestValidateAppend: the limits, named in the messages.
func TestValidateAppend(t *testing.T) {
	for _, tc := range []struct {
		block   int
		opts    *store.AppendOptions
		code    string
		mention string
	}{
		{0, nil, store.CodeInvalidHeaderValue, "empty"},
		{store.MaxAppendBlockSize + 1, nil, store.CodeRequestBodyTooLarge, "104857601 bytes is over the limit of 104857600"},
		{1, &store.AppendOptions{AppendPosition: new(int64(-1))}, store.CodeInvalidHeaderValue, "AppendPosition -1"},
		{1, &store.AppendOptions{MaxSize: new(int64(-2))}, store.CodeInvalidHeaderValue, "MaxSize -2"},
	} {
		err := ValidateAppend("b", make([]byte, tc.block), tc.opts)
		if store.Code(err) != tc.code || store.SourceOf(err) != store.SourceClient || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("block of %d, %+v: %v; want %s naming %q", tc.block, tc.opts, err, tc.code, tc.mention)
		}
	}
	if err := ValidateAppend("b", make([]byte, store.MaxAppendBlockSize), &store.AppendOptions{AppendPosition: new(int64(0)), MaxSize: new(int64(0))}); err != nil {
		t.Errorf("a block of the limit: %v", err)
	}
	if err := ValidateRange("b", -1, 0); store.Code(err) != store.CodeInvalidInput {
		t.Errorf("negative offset: %v", err)
	}
}
