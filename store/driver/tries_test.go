package driver

import (
	"context"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

type tryLog struct {
	mu  sync.Mutex
	got []int
}

func (l *tryLog) ObserveTry(t Try) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, t.Status)
}

// TestReportTryErr: every observer of the context hears of a request that
// was sent, with its status; a refusal made before sending and a context
// that ended before the request left are no tries.
func TestReportTryErr(t *testing.T) {
	outer, inner := &tryLog{}, &tryLog{}
	ctx := WithTryObserver(WithTryObserver(context.Background(), outer), inner)
	ReportTryErr(ctx, nil)
	ReportTryErr(ctx, store.Errorf(store.CodeEntityAlreadyExists, 409, "exists"))
	ReportTryErr(ctx, &store.Error{Code: store.CodeResponseLost, Unknown: true, Source: store.SourceTransport})
	ReportTryErr(ctx, refuse(store.CodeInvalidInput, 400, "refused before sending"))
	ReportTryErr(ctx, store.ContextError(context.Canceled, false, true, ""))
	for _, l := range []*tryLog{outer, inner} {
		if len(l.got) != 3 || l.got[0] != 200 || l.got[1] != 409 || l.got[2] != 0 {
			t.Errorf("tries %v, want [200 409 0]", l.got)
		}
	}
	ReportTry(context.Background(), 200) // no observer: nothing to tell
}
