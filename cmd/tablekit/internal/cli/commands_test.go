package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const allTypes = `{"PartitionKey":"p1","RowKey":"r1","S":"text","I":42,"L@odata.type":"Edm.Int64","L":"9007199254740993","D@odata.type":"Edm.Double","D":1.0,"F@odata.type":"Edm.Double","F":2.5,"B":true,"T@odata.type":"Edm.DateTime","T":"2026-01-02T03:04:05.1234567Z","G@odata.type":"Edm.Guid","G":"0f8fad5b-d9cb-469f-a165-70867728950e","X@odata.type":"Edm.Binary","X":"AAEC/w=="}`

func TestCommands(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		orders := b.table("Orders")
		b.run(t, 0, "", "tables", "create", orders)
		b.run(t, 1, "", "tables", "create", orders) // exists
		b.run(t, 0, "", "tables", "create", "--if-not-exists", orders)
		if r := b.run(t, 0, "", "tables", "list"); !strings.Contains(r.out, `"table":"`+orders+`"`) {
			t.Fatalf("tables list: %s", r.out)
		}

		// put: insert from stdin, every EDM type kept
		r := b.run(t, 0, allTypes, "put", orders)
		etag := r.lines(t)[0]["etag"].(string)
		got := b.run(t, 0, "", "get", orders, "p1", "r1").out
		for _, want := range []string{`"L@odata.type":"Edm.Int64","L":"9007199254740993"`, `"D@odata.type":"Edm.Double","D":1.0`,
			`"T":"2026-01-02T03:04:05.1234567Z"`, `"G@odata.type":"Edm.Guid","G":"0f8fad5b-d9cb-469f-a165-70867728950e"`,
			`"X@odata.type":"Edm.Binary","X":"AAEC/w=="`, `"I":42`, `"B":true`} {
			if !strings.Contains(got, want) {
				t.Errorf("get: %s lacks %s", got, want)
			}
		}
		// a second insert fails; a write at a stale ETag fails; --etag and --force
		b.run(t, 1, allTypes, "put", orders)
		r = b.run(t, 0, "", "merge", orders, "--etag", etag, "--data", `{"PartitionKey":"p1","RowKey":"r1","Status":"open"}`)
		etag2 := r.lines(t)[0]["etag"].(string)
		r = b.run(t, 1, "", "merge", orders, "--etag", etag, "--data", `{"PartitionKey":"p1","RowKey":"r1","Status":"late"}`)
		if !strings.Contains(r.err, "UpdateConditionNotSatisfied") {
			t.Errorf("stale ETag: %s", r.err)
		}
		b.run(t, 2, "", "merge", orders, "--data", `{"PartitionKey":"p1","RowKey":"r1","Status":"late"}`) // no ETag, no --force
		b.run(t, 0, "", "put", orders, "--force", "--data", `{"PartitionKey":"p2","RowKey":"r1","N":1}`)
		b.run(t, 2, "", "put", orders, "--data", `{"PartitionKey":"p2","RowKey":"r2","N":`) // not JSON
		b.run(t, 2, "", "delete", orders, "p2", "r1")                                       // no ETag
		b.run(t, 0, "", "delete", orders, "p2", "r1", "--force")
		b.run(t, 1, "", "get", orders, "p2", "r1")
		if got := b.run(t, 0, "", "get", orders, "p1", "r1", "--select", "Status").lines(t)[0]; got["Status"] != "open" || got["odata.etag"] != etag2 {
			t.Errorf("get --select: %v", got)
		}

		// many rows: import, query, count, plan
		var sb strings.Builder
		for p := range 5 {
			for r := range 20 {
				fmt.Fprintf(&sb, `{"PartitionKey":"c%d","RowKey":"o%03d","Total@odata.type":"Edm.Double","Total":%d.0,"Status":"s%d"}`+"\n", p, r, r*10, r%3)
			}
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "orders.jsonl")
		os.WriteFile(in, []byte(sb.String()), 0o644)
		r = b.run(t, 0, "", "import", orders, in)
		if l := r.lines(t)[0]; l["written"] != 100.0 {
			t.Fatalf("import: %v", l)
		}
		r = b.run(t, 0, "", "query", orders, "--filter", "PartitionKey eq 'c1' and Total ge 100.0", "--select", "Total")
		if n := len(r.lines(t)); n != 10 {
			t.Errorf("query: %d rows, want 10", n)
		}
		if n := len(b.run(t, 0, "", "query", orders, "--filter", "PartitionKey eq 'c1'", "--top", "3", "--page-size", "2").lines(t)); n != 3 {
			t.Errorf("query --top 3: %d rows", n)
		}
		r = b.run(t, 2, "", "query", orders, "--filter", "Total gt 5.0")
		if !strings.Contains(r.err, "--scan") {
			t.Errorf("table scan without --scan: %s", r.err)
		}
		r = b.run(t, 2, "", "query", orders, "--filter", "PartitionKey eq 'c1' and Total gtt 5.0")
		if !strings.Contains(r.err, "at offset 31") || !strings.Contains(r.err, "^") {
			t.Errorf("malformed filter: %s", r.err)
		}
		for filter, kind := range map[string]string{
			"PartitionKey eq 'c1' and RowKey eq 'o001'":                    "point query",
			"PartitionKey eq 'c1' and RowKey ge 'o010' and RowKey lt 'o2'": "row range",
			"PartitionKey eq 'c1'":                                         "partition scan",
			"Total gt 5.0":                                                 "table scan",
		} {
			if l := b.run(t, 0, "", "query", orders, "--filter", filter, "--plan").lines(t); l[0]["plan"] != kind {
				t.Errorf("--plan %q: %v, want %s", filter, l, kind)
			}
		}
		if l := b.run(t, 0, "", "count", orders, "--scan").lines(t)[0]; l["count"] != 101.0 || l["partitions"] != 6.0 {
			t.Errorf("count: %v", l)
		}
		if l := b.run(t, 0, "", "count", orders, "--from-pk", "c1", "--to-pk", "c3").lines(t)[0]; l["count"] != 40.0 {
			t.Errorf("count of a partition range: %v", l)
		}
		b.run(t, 2, "", "count", orders)
		r = b.run(t, 0, "", "query", orders, "--filter", "PartitionKey eq 'c0'", "-o", "table")
		if !strings.Contains(r.out, "PartitionKey  RowKey") {
			t.Errorf("table output: %s", r.out)
		}

		// export and import back, JSON lines and CSV
		for _, f := range []string{"all.jsonl", "all.csv"} {
			out := filepath.Join(dir, f)
			b.run(t, 0, "", "export", orders, "--out", out)
			back := b.table("Back" + strings.TrimPrefix(filepath.Ext(f), "."))
			b.run(t, 0, "", "import", back, out, "--create")
			b.run(t, 0, "", "verify", orders, back)
			if r := b.run(t, 0, "", "diff", orders, back); r.out != "" {
				t.Errorf("diff after %s round trip: %s", f, r.out)
			}
		}
		csv, _ := os.ReadFile(filepath.Join(dir, "all.csv"))
		if !strings.Contains(string(csv), "L:Edm.Int64") || !strings.Contains(string(csv), ",1.0,") {
			t.Errorf("CSV header or values: %s", csv)
		}
		b.run(t, 0, "", "export", orders, "--from-pk", "c1", "--to-pk", "c2", "--out", filepath.Join(dir, "c1.jsonl"))
		if data, _ := os.ReadFile(filepath.Join(dir, "c1.jsonl")); strings.Count(string(data), "\n") != 20 {
			t.Errorf("partition range export: %d lines", strings.Count(string(data), "\n"))
		}

		// copy, verify, diff
		cp := b.table("Copy")
		b.run(t, 0, "", "copy", orders, cp, "--create", "--checkpoint", filepath.Join(dir, "copy.ckpt"))
		b.run(t, 0, "", "verify", orders, cp)
		b.run(t, 0, "", "merge", cp, "--force", "--data", `{"PartitionKey":"c1","RowKey":"o001","Total@odata.type":"Edm.Double","Total":7.0}`)
		b.run(t, 0, "", "delete", cp, "c2", "o002", "--force")
		r = b.run(t, 1, "", "verify", orders, cp)
		if !strings.Contains(r.err, "lost 1, extra 0, changed 1") || !strings.Contains(r.err, "changed: c1/o001") {
			t.Errorf("verify: %s", r.err)
		}
		r = b.run(t, 1, "", "diff", orders, cp)
		if !strings.Contains(r.out, `"properties":"Total: Edm.Double 10.0 -\u003e Edm.Double 7.0"`) || !strings.Contains(r.out, `"kind":"only-in-source","pk":"c2","rk":"o002"`) {
			t.Errorf("diff: %s", r.out)
		}
		// a resumed copy skips the ranges done
		r = b.run(t, 0, "", "copy", orders, cp, "--checkpoint", filepath.Join(dir, "copy.ckpt"))
		if !strings.Contains(r.err, "11 ranges (11 done by an earlier run)") {
			t.Errorf("resumed copy: %s", r.err)
		}

		// backup and restore elsewhere
		bk := filepath.Join(dir, "backups")
		r = b.run(t, 0, "", "backup", bk, "--tables", orders+","+cp)
		if n := len(r.lines(t)); n != 2 {
			t.Fatalf("backup: %s", r.out)
		}
		runs, _ := os.ReadDir(bk)
		if len(runs) != 1 {
			t.Fatalf("backup folders: %v", runs)
		}
		runDir := filepath.Join(bk, runs[0].Name())
		manifest, _ := os.ReadFile(filepath.Join(runDir, "manifest.json"))
		for _, want := range []string{`"rows": 101`, `"partitions": [`, `"sha256": "`, "not a point-in-time image"} {
			if !strings.Contains(string(manifest), want) {
				t.Errorf("manifest lacks %s: %s", want, manifest)
			}
		}
		elsewhere := t.TempDir()
		run0 := run(t, nil, "", "restore", runDir, "--local", elsewhere)
		if run0.code != 0 {
			t.Fatalf("restore: %d %s", run0.code, run0.err)
		}
		b.run(t, 0, "", "verify", orders, orders, "--to-local", elsewhere)
		// a damaged backup file is refused
		f := filepath.Join(runDir, orders+".jsonl")
		data, _ := os.ReadFile(f)
		os.WriteFile(f, append(data, '\n'), 0o644)
		if r := run(t, nil, "", "restore", runDir, "--local", t.TempDir()); r.code != 1 || !strings.Contains(r.err, "the file changed or is damaged") {
			t.Errorf("damaged backup: %d %s", r.code, r.err)
		}

		// backup into a blob container (Azurite), restore from it into another account
		if b.name == "azurite" {
			ct := b.prefix + "backups"
			r = b.run(t, 0, "", "backup", "--container", ct, "--tables", orders)
			m := regexp.MustCompile(`blobs (\S+)/`).FindStringSubmatch(r.err)
			if m == nil {
				t.Fatalf("backup --container: %s", r.err)
			}
			other := t.TempDir()
			b.run(t, 0, "", "restore", "--container", ct, m[1], "--to-local", other)
			b.run(t, 0, "", "verify", orders, orders, "--to-local", other)
			b.run(t, 1, "", "restore", "--container", ct, "20000101T000000.000Z", "--to-local", other)
		} else {
			b.run(t, 2, "", "backup", "--container", "backups")
		}

		b.run(t, 2, "", "tables", "delete", cp)
		b.run(t, 0, "", "tables", "delete", cp, "--yes")
	})
}

func TestImportBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		tbl := b.table("Bad")
		dir := t.TempDir()
		cases := []struct {
			file, data, want string
		}{
			{"bad.jsonl", `{"PartitionKey":"a","RowKey":"1"}` + "\n" + `{"PartitionKey":"a","RowKey":"2"}` + "\n" + `{"PartitionKey":"a","RowKey":"3","N":}` + "\n", "line 3:"},
			{"slash.jsonl", `{"PartitionKey":"a","RowKey":"1"}` + "\n\n" + `{"PartitionKey":"a/b","RowKey":"2"}` + "\n", "line 3:"},
			{"type.jsonl", `{"PartitionKey":"a","RowKey":"1","N@odata.type":"Edm.Int65","N":"1"}` + "\n", "line 1:"},
			{"bad.csv", "PartitionKey,RowKey,N:Edm.Int32\na,1,5\na,2,five\n", "line 3: column N:Edm.Int32: \"five\" is not a valid Edm.Int32"},
			{"head.csv", "PartitionKey,RowKey,N\na,1,5\n", "line 1: column 3 (\"N\") has no type"},
		}
		for _, c := range cases {
			p := filepath.Join(dir, c.file)
			os.WriteFile(p, []byte(c.data), 0o644)
			r := b.run(t, 1, "", "import", tbl, p, "--create")
			if !strings.Contains(r.err, c.want) || !strings.Contains(r.err, "nothing was written") {
				t.Errorf("%s: %s, want %q", c.file, r.err, c.want)
			}
			b.run(t, 1, "", "import", tbl, p, "--check")
		}
		// nothing was written, not even the table
		if r := run(t, b.env, "", append(b.flags, "count", tbl, "--scan")...); r.code != 1 {
			t.Errorf("the table exists after refused imports: %s", r.out)
		}
		good := filepath.Join(dir, "good.jsonl")
		os.WriteFile(good, []byte(`{"PartitionKey":"a","RowKey":"1"}`+"\n"), 0o644)
		if r := b.run(t, 0, "", "import", tbl, good, "--check"); !strings.Contains(r.err, "1 entities in 1 partitions, every line valid") {
			t.Errorf("--check: %s", r.err)
		}
		// insert mode: a row present with the same values counts as present; other values fail
		b.run(t, 0, "", "import", tbl, good, "--create", "--mode", "insert")
		if l := b.run(t, 0, "", "import", tbl, good, "--mode", "insert").lines(t)[0]; l["present"] != 1.0 {
			t.Errorf("insert again: %v", l)
		}
		os.WriteFile(good, []byte(`{"PartitionKey":"a","RowKey":"1","N":2}`+"\n"), 0o644)
		r := b.run(t, 1, "", "import", tbl, good, "--mode", "insert")
		if !strings.Contains(r.err, "line 1 (a/1) not written") || !strings.Contains(r.err, "EntityAlreadyExists") {
			t.Errorf("insert over other values: %s", r.err)
		}
	})
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bogus"},
		{"get", "T"},
		{"--local", dir, "query"},
		{"--local", dir, "get", "Tbl", "a", "b", "--nope"},
		{"--local", dir, "--conn", "x", "tables", "list"},
		{"tables", "list"}, // no account
		{"--local", dir, "query", "Tbl", "--page-size", "5000", "--filter", "PartitionKey eq 'a'"},
		{"--local", dir, "-o", "xml", "tables", "list"},
	} {
		if r := run(t, nil, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.err)
		}
	}
	for _, args := range [][]string{{"--help"}, {"query", "--help"}, {"import", "--help"}, {"tables", "create", "--help"}} {
		if r := run(t, nil, "", args...); r.code != 0 || !strings.Contains(r.out, "Usage:") {
			t.Errorf("%v: exit %d: %s", args, r.code, r.out)
		}
	}
	// the environment names the account
	if r := run(t, map[string]string{"TABLEKIT_LOCAL": dir}, "", "tables", "list"); r.code != 0 {
		t.Errorf("TABLEKIT_LOCAL: %d %s", r.code, r.err)
	}
}

func TestSettleAndStdin(t *testing.T) {
	dir := t.TempDir()
	b := backend{name: "memstore", flags: []string{"--local", filepath.Join(dir, "db")}, env: map[string]string{}}
	in := `{"PartitionKey":"a","RowKey":"1","N":1}` + "\n" + `{"PartitionKey":"a","RowKey":"2","N":2}` + "\n"
	if l := b.run(t, 0, in, "import", "Settle", "-", "--create").lines(t)[0]; l["written"] != 2.0 {
		t.Fatalf("import from stdin: %v", l)
	}
	unknown := filepath.Join(dir, "u.jsonl")
	os.WriteFile(unknown, []byte(
		`{"line":1,"table":"Settle","action":"insert","entity":{"PartitionKey":"a","RowKey":"1","N":1},"error":"lost"}`+"\n"+
			`{"line":2,"table":"Settle","action":"insert","entity":{"PartitionKey":"a","RowKey":"2","N":5},"error":"lost"}`+"\n"+
			`{"line":3,"table":"Settle","action":"insert","entity":{"PartitionKey":"a","RowKey":"3","N":3},"error":"lost"}`+"\n"), 0o644)
	r := b.run(t, 1, "", "settle", unknown)
	states := []string{}
	for _, l := range r.lines(t) {
		states = append(states, l["state"].(string))
	}
	if strings.Join(states, "|") != "applied|changed|not applied" {
		t.Errorf("settle: %v", states)
	}
	r = b.run(t, 1, "", "settle", unknown, "--resend") // the changed row still needs a decision
	if !strings.Contains(r.out, `"state":"not applied; resent"`) {
		t.Errorf("settle --resend: %s", r.out)
	}
	if l := b.run(t, 0, "", "get", "Settle", "a", "3").lines(t)[0]; l["N"] != 3.0 {
		t.Errorf("resent row: %v", l)
	}
	// a progress bar goes to a terminal's stderr only, and never breaks the output
	yes := true
	var out, errb strings.Builder
	code := Main(t.Context(), append(b.flags, "export", "Settle"), Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, StderrTerminal: &yes})
	if code != 0 || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("export with a progress bar: %d %q", code, out.String())
	}
}
