package keys

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tableNameRule is the service's rule, as table-rules.md states it.
var tableNameRule = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

func TestTableName(t *testing.T) {
	tm := time.Date(2026, 11, 22, 11, 5, 0, 0, time.UTC)
	got, err := TableName("Logins", tm, Day)
	if err != nil || got != "Logins20261122" {
		t.Errorf("TableName = %q, %v", got, err)
	}
	long := "L" + strings.Repeat("x", 50) // 51 characters: the most Minute allows
	got, err = TableName(long, tm, Minute)
	if err != nil || len(got) != 63 || !tableNameRule.MatchString(got) {
		t.Errorf("TableName with a 51-character prefix = %q, %v; want a legal 63-character name", got, err)
	}
	if got, err := TableName("a", tm, Month); err != nil || got != "a202611" {
		t.Errorf("one-letter prefix = %q, %v", got, err)
	}
}

func TestTableNameRejects(t *testing.T) {
	tm := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		prefix  string
		g       Granularity
		mention string
	}{
		{"", Day, "empty"},
		{"1logs", Day, "offset 0"},
		{"log_in", Day, `'_' at offset 3`},
		{"log-in", Day, `'-' at offset 3`},
		{"Lögin", Day, "offset 1"},
		{"L" + strings.Repeat("x", 51), Minute, "would be 64, the limit is 63"},
		{"L" + strings.Repeat("x", 57), Month, "would be 64"},
	}
	for _, c := range cases {
		_, err := TableName(c.prefix, tm, c.g)
		if !errors.Is(err, ErrInvalidTableName) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("TableName(%q, %s) = %v, want ErrInvalidTableName mentioning %q", c.prefix, c.g, err, c.mention)
		}
	}
	if _, err := TableName("Logs", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Day); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("TableName past 9999 = %v, want ErrOutOfRange", err)
	}
	if _, err := TableName("Logs", tm, 0); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("TableName with granularity 0 = %v, want ErrOutOfRange", err)
	}
}

func TestTableNameProperties(t *testing.T) {
	rng := newRand(13)
	letters := "abcXYZ019"
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(60)
		b := []byte{"aZ"[rng.IntN(2)]}
		for len(b) < n {
			b = append(b, letters[rng.IntN(len(letters))])
		}
		prefix := string(b)
		g := []Granularity{Minute, Hour, Day, Month}[rng.IntN(4)]
		tm := randTime(rng)
		name, err := TableName(prefix, tm, g)
		fits := len(prefix)+g.digits() <= 63
		if (err == nil) != fits {
			t.Fatalf("TableName(%q, %s): err %v, fits %v", prefix, g, err, fits)
		}
		if err != nil {
			continue
		}
		if !tableNameRule.MatchString(name) || strings.EqualFold(name, "tables") {
			t.Fatalf("TableName(%q) = %q breaks the table name rule", prefix, name)
		}
		back, err := ParseTableName(strings.ToUpper(prefix), name, g)
		if err != nil || !back.Equal(g.Truncate(tm)) {
			t.Fatalf("ParseTableName(%q) = %s, %v; want %s", name, back, err, g.Truncate(tm))
		}
	}
}

func TestParseTableNameRejects(t *testing.T) {
	for _, name := range []string{"Other20261122", "Logins", "Logins2026112", "Logins20261122x", "Log"} {
		if _, err := ParseTableName("Logins", name, Day); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseTableName(Logins, %q) = %v, want ErrMalformed", name, err)
		}
	}
	if _, err := ParseTableName("1x", "1x20261122", Day); !errors.Is(err, ErrInvalidTableName) {
		t.Errorf("ParseTableName with a bad prefix = %v, want ErrInvalidTableName", err)
	}
}

func TestTableNames(t *testing.T) {
	from := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	got, err := TableNames("Logins", from, to, Day)
	if err != nil || strings.Join(got, ",") != "Logins20261121,Logins20261122,Logins20261123" {
		t.Errorf("TableNames = %q, %v", got, err)
	}
	if _, err := TableNames("_", from, to, Day); !errors.Is(err, ErrInvalidTableName) {
		t.Errorf("TableNames with bad prefix = %v", err)
	}
	if _, err := TableNames("Logins", to, from, Day); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("TableNames backwards = %v", err)
	}
}
