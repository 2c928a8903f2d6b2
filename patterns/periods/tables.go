package periods

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// ErrBeingDeleted is matched (errors.Is) by the error of a table creation
// that still met TableBeingDeleted after every attempt Options allow. The
// error wraps the service's last answer as well.
var ErrBeingDeleted = errors.New("periods: table is still being deleted")

// ErrExpired is matched by the error of a write to a period that lies
// wholly before the retention horizon: its table is deleted, or due to be,
// and writing would bring it back.
var ErrExpired = errors.New("periods: period is past the retention horizon")

// Options tune a set of period tables; a nil *Options, and every zero
// field, takes the default written beside the field. The prefix and the
// period, which are required, are New's parameters.
type Options struct {
	// Retention is how long data is kept. Retain deletes the tables whose
	// whole period ended before now minus Retention, and writes to such a
	// period are refused. Zero (the default) keeps everything (Retain then
	// refuses to run); it may not be negative.
	Retention time.Duration

	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sleep pauses between attempts; nil means a timer that returns early
	// with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Random returns a float in [0, 1) for backoff jitter; nil means
	// math/rand/v2's Float64.
	Random func() float64
	// Attempts bounds the tries of one table creation or deletion that
	// meets TableBeingDeleted or a transient error; 0 means 8.
	Attempts int
	// Backoff is the first pause (2 s if zero), doubling up to MaxBackoff
	// (30 s if zero, at least Backoff), each with up to half of it taken
	// off at random. The defaults wait one to two minutes in all before
	// giving up, well past the 40 s Azure typically keeps a deleted
	// table's name.
	Backoff, MaxBackoff time.Duration
}

// Period is one period and its table.
type Period struct {
	// Table is the table's name.
	Table string
	// Start is the first instant of the period and End the first instant
	// after it, in UTC.
	Start, End time.Time
}

// Tables is a set of period tables in one store. It is safe for
// concurrent use.
type Tables struct {
	st     store.Store
	prefix string
	period keys.Granularity
	cfg    Options
}

// New returns the period tables of st whose names start with prefix (a
// letter, then letters and digits, leaving room for the period's digits
// within 63 characters), one table per period (keys.Day or keys.Month;
// keys.Hour and keys.Minute work too). opts may be nil for the defaults.
// It does no I/O. Every error it returns (a nil store, a bad prefix or
// period, a negative retention, attempts or backoff) matches
// store.ErrInvalidInput and names the field and its limit.
func New(st store.Store, prefix string, period keys.Granularity, opts *Options) (*Tables, error) {
	if st == nil {
		return nil, refused("New: the store is nil", nil)
	}
	var cfg Options
	if opts != nil {
		cfg = *opts
	}
	switch {
	case cfg.Attempts < 0:
		return nil, refused(fmt.Sprintf("Options.Attempts %d: want 0 (the default, 8) or more", cfg.Attempts), nil)
	case cfg.Retention < 0:
		return nil, refused(fmt.Sprintf("Options.Retention %s is negative: want 0 (keep everything) or more", cfg.Retention), nil)
	case cfg.Backoff < 0 || cfg.MaxBackoff < 0:
		return nil, refused(fmt.Sprintf("Options.Backoff %s, Options.MaxBackoff %s: want 0 (the defaults, 2s and 30s) or more", cfg.Backoff, cfg.MaxBackoff), nil)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = wait.Sleep
	}
	if cfg.Random == nil {
		cfg.Random = rand.Float64
	}
	if cfg.Attempts == 0 {
		cfg.Attempts = 8
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 2 * time.Second
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxBackoff < cfg.Backoff {
		return nil, refused(fmt.Sprintf("Options.MaxBackoff %s is below Options.Backoff %s: want at least Backoff", cfg.MaxBackoff, cfg.Backoff), nil)
	}
	if _, err := keys.TableName(prefix, time.Unix(0, 0), period); err != nil {
		return nil, refused("the prefix or the period: "+err.Error(), err)
	}
	return &Tables{st: st, prefix: prefix, period: period, cfg: cfg}, nil
}

// refused is the error of an input New or NewRepo refuses: InvalidInput
// (400) from tablekit's own checks, so that it matches
// store.ErrInvalidInput, wrapping cause (when not nil) as well.
func refused(msg string, cause error) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "%s", msg)
	e.Source = store.SourceClient
	if cause != nil {
		return fmt.Errorf("periods: %w (%w)", e, cause)
	}
	return fmt.Errorf("periods: %w", e)
}

// Store returns the store the tables live in.
func (p *Tables) Store() store.Store { return p.st }

// Prefix returns the prefix of the tables' names.
func (p *Tables) Prefix() string { return p.prefix }

// Period returns the length of one table's period.
func (p *Tables) Period() keys.Granularity { return p.period }

// Options returns the options, defaults filled in.
func (p *Tables) Options() Options { return p.cfg }

// PeriodOf returns the period holding t and its table.
func (p *Tables) PeriodOf(t time.Time) (Period, error) {
	name, err := keys.TableName(p.prefix, t, p.period)
	if err != nil {
		return Period{}, fmt.Errorf("periods: %w", err)
	}
	return p.periodNamed(name, p.period.Truncate(t)), nil
}

// periodNamed builds the Period starting at start.
func (p *Tables) periodNamed(name string, start time.Time) Period {
	end := start.AddDate(0, 1, 0)
	switch p.period {
	case keys.Day:
		end = start.AddDate(0, 0, 1)
	case keys.Hour:
		end = start.Add(time.Hour)
	case keys.Minute:
		end = start.Add(time.Minute)
	}
	return Period{Table: name, Start: start, End: end}
}

// Horizon returns the retention horizon: now minus Retention (the zero
// time when Retention is zero). A period that ended at or before it is
// expired.
func (p *Tables) Horizon() time.Time {
	if p.cfg.Retention == 0 {
		return time.Time{}
	}
	return p.cfg.Now().UTC().Add(-p.cfg.Retention)
}

// expired reports whether per lies wholly before the horizon of this
// process's clock.
func (p *Tables) expired(per Period) bool {
	return p.cfg.Retention > 0 && !per.End.After(p.Horizon())
}

// writable returns the period of t, refusing an expired one.
func (p *Tables) writable(t time.Time) (Period, error) {
	per, err := p.PeriodOf(t)
	if err != nil {
		return Period{}, err
	}
	if p.expired(per) {
		return Period{}, fmt.Errorf("%w: time %s is in %s, which ended %s, at or before the horizon %s (retention %s)",
			ErrExpired, t.UTC().Format(time.RFC3339), per.Table, per.End.Format(time.RFC3339), p.Horizon().Format(time.RFC3339), p.cfg.Retention)
	}
	return per, nil
}

// Ensure creates the table of the period holding t unless it exists, and
// reports whether it created it. It refuses an expired period
// (ErrExpired): expired by this process's clock, or by the horizon a
// retention run recorded (RecordedHorizon), which it reads before and
// after creating the table; when a retention run expired the period
// meanwhile, the table is deleted again. When the service answers
// TableBeingDeleted (the name was deleted moments ago) it backs off and
// tries again, up to Attempts times; then it fails with an error matching
// ErrBeingDeleted that names the table, the attempts and the time waited.
func (p *Tables) Ensure(ctx context.Context, t time.Time) (created bool, err error) {
	per, err := p.writable(t)
	if err != nil {
		return false, err
	}
	return p.createPeriod(ctx, per)
}

// Prepare creates the tables of the current period and of the next one
// ahead of time, so that the first writes of a period neither wait for a
// creation nor meet a new table's cold start. Run it from a timer (once an
// hour suits day and month periods). It returns the names it created.
func (p *Tables) Prepare(ctx context.Context) ([]string, error) {
	cur, err := p.PeriodOf(p.cfg.Now())
	if err != nil {
		return nil, err
	}
	next, err := p.PeriodOf(cur.End)
	if err != nil {
		return nil, err
	}
	var made []string
	for _, per := range []Period{cur, next} {
		created, err := p.createPeriod(ctx, per)
		if err != nil {
			return made, err
		}
		if created {
			made = append(made, per.Table)
		}
	}
	return made, nil
}

// createTable makes a table unless it exists, waiting out
// TableBeingDeleted. CreateTableIfNotExists is idempotent, so a transient
// failure or an unknown outcome is simply tried again. It checks no
// horizon: a period's table is created through createPeriod.
func (p *Tables) createTable(ctx context.Context, name string) (bool, error) {
	start := p.cfg.Now()
	var last error
	for attempt := 0; attempt < p.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := p.cfg.Sleep(ctx, p.backoff(attempt)); err != nil {
				return false, fmt.Errorf("periods: create table %s: %w (last answer: %w)", name, err, last)
			}
		}
		created, err := p.st.CreateTableIfNotExists(ctx, name)
		switch {
		case err == nil:
			return created, nil
		case store.Code(err) == store.CodeTableBeingDeleted,
			errors.Is(err, store.ErrTransient), errors.Is(err, store.ErrUnknownOutcome):
			last = err
		default:
			return false, fmt.Errorf("periods: create table %s: %w", name, err)
		}
	}
	waited := p.cfg.Now().Sub(start)
	if store.Code(last) == store.CodeTableBeingDeleted {
		return false, fmt.Errorf("%w: table %s still answered TableBeingDeleted after %d attempts over %s (Azure keeps a deleted table's name for about 40 s; raise Options.Attempts or Backoff to wait longer): %w",
			ErrBeingDeleted, name, p.cfg.Attempts, waited.Round(time.Millisecond), last)
	}
	return false, fmt.Errorf("periods: create table %s: failed %d times over %s: %w", name, p.cfg.Attempts, waited.Round(time.Millisecond), last)
}

// backoff is the pause before attempt n (1, 2, ...): Backoff doubling up to
// MaxBackoff, less up to half of it at random.
func (p *Tables) backoff(n int) time.Duration {
	d := p.cfg.MaxBackoff
	if n-1 < 30 {
		d = min(d, p.cfg.Backoff<<(n-1))
	}
	return d - time.Duration(p.cfg.Random()*float64(d/2))
}
