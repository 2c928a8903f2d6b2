package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// tables proves the table rules: names, case, existence, listing.
func (s *suite) tables(t *testing.T) {
	s.run(t, "NameInvalidCharacter_InvalidResourceName", func(t *testing.T) {
		st := s.h.New(t)
		base := s.names.next()
		for _, name := range []string{
			"1" + base, base + "-x", base + "_x", base + " x", base + "é", base + ".x", "-" + base,
		} {
			err := st.CreateTable(t.Context(), name)
			wantErr(t, err, store.CodeInvalidResourceName, 400, noIndex)
			_, err = st.CreateTableIfNotExists(t.Context(), name)
			wantErr(t, err, store.CodeInvalidResourceName, 400, noIndex)
			_, err = st.Table(name).Insert(t.Context(), ent("p", "r"))
			wantErr(t, err, store.CodeInvalidResourceName, 400, noIndex)
		}
		wantNoTables(t, st, base)
	})

	s.run(t, "NameLength_OutOfRangeInput", func(t *testing.T) {
		st := s.h.New(t)
		base := s.names.next()
		for _, name := range []string{"ab", "x", base + strings.Repeat("x", store.MaxTableNameLen+1-len(base))} {
			err := st.CreateTable(t.Context(), name)
			wantErr(t, err, store.CodeOutOfRangeInput, 400, noIndex)
		}
		wantNoTables(t, st, base)
		// Exactly 63 characters is allowed.
		long := base + strings.Repeat("x", store.MaxTableNameLen-len(base))
		must(t, st.CreateTable(t.Context(), long), "CreateTable of 63 characters")
		s.dropTableLater(t, st, long)
		mustInsert(t, st.Table(long), ent("p", "r"))
	})

	s.run(t, "NameOfThreeCharacters_Allowed", func(t *testing.T) {
		st := s.h.New(t)
		// Three-character names are few: on a shared server another run may
		// hold one, so try a handful.
		r := s.names.next()
		for i := range 10 {
			name := fmt.Sprintf("q%c%c", 'a'+(r[len(r)-1]+byte(i))%26, 'a'+byte(i)*7%26)
			err := st.CreateTable(t.Context(), name)
			if store.Code(err) == store.CodeTableAlreadyExists || store.Code(err) == store.CodeTableBeingDeleted {
				continue
			}
			must(t, err, "CreateTable of 3 characters")
			s.dropTableLater(t, st, name)
			mustInsert(t, st.Table(name), ent("p", "r"))
			return
		}
		t.Fatal("every three-character name tried was taken")
	})

	s.run(t, "ReservedName_InvalidInput", func(t *testing.T) {
		st := s.h.New(t)
		for _, name := range []string{"tables", "Tables", "TABLES", "tAbLeS"} {
			err := st.CreateTable(t.Context(), name)
			wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
			_, err = st.CreateTableIfNotExists(t.Context(), name)
			wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		}
	})

	s.run(t, "CreateExisting_TableAlreadyExists", func(t *testing.T) {
		st, tbl := s.newTable(t)
		e := ent("p", "r", "A", int32(1))
		mustInsert(t, tbl, e)
		err := st.CreateTable(t.Context(), tbl.Name())
		wantErr(t, err, store.CodeTableAlreadyExists, 409, noIndex)
		created, err := st.CreateTableIfNotExists(t.Context(), tbl.Name())
		if err != nil || created {
			t.Errorf("CreateTableIfNotExists of an existing table = %v, %v; want false, nil", created, err)
		}
		// The failed create did not empty the table.
		wantKeys(t, tbl, key{"p", "r"})
	})

	s.run(t, "CreateIfNotExists_CreatesOnce", func(t *testing.T) {
		st := s.h.New(t)
		name := s.names.next()
		created, err := st.CreateTableIfNotExists(t.Context(), name)
		must(t, err, "CreateTableIfNotExists")
		s.dropTableLater(t, st, name)
		if !created {
			t.Errorf("CreateTableIfNotExists of a new table reported created = false")
		}
		mustInsert(t, st.Table(name), ent("p", "r"))
		created, err = st.CreateTableIfNotExists(t.Context(), name)
		if err != nil || created {
			t.Errorf("second CreateTableIfNotExists = %v, %v; want false, nil", created, err)
		}
		wantKeys(t, st.Table(name), key{"p", "r"})
	})

	s.run(t, "CaseVariant_TableAlreadyExists", func(t *testing.T) {
		st := s.h.New(t)
		name := "Tk" + strings.ToUpper(s.names.next()[2:]) + "Mixed"
		must(t, st.CreateTable(t.Context(), name), "CreateTable")
		s.dropTableLater(t, st, name)
		for _, variant := range []string{strings.ToLower(name), strings.ToUpper(name)} {
			err := st.CreateTable(t.Context(), variant)
			wantErr(t, err, store.CodeTableAlreadyExists, 409, noIndex)
			created, err := st.CreateTableIfNotExists(t.Context(), variant)
			if err != nil || created {
				t.Errorf("CreateTableIfNotExists(%q) = %v, %v; want false, nil", variant, created, err)
			}
		}
		// Azure also resolves entity operations on a case variant to the
		// table; Azurite 3.35 answers TableNotFound, so the portable suite
		// leaves that out (memstore proves it in TestTableNameCaseVariant_SameTable).
		// Listing returns the creation case, once.
		page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: name})
		must(t, err, "ListTables")
		if got := tableNames(page); !slices.Equal(got, []string{name}) {
			t.Errorf("ListTables(prefix %q) = %v, want [%s]", name, got, name)
		}
	})

	s.run(t, "EntityOpOnMissingTable_TableNotFound", func(t *testing.T) {
		st := s.h.New(t)
		tbl := st.Table(s.names.next())
		ctx := t.Context()
		_, err := tbl.Get(ctx, "p", "r", nil)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		_, err = tbl.Insert(ctx, ent("p", "r"))
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		_, err = tbl.Update(ctx, ent("p", "r"), store.Merge, store.ETagAny)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		_, err = tbl.Upsert(ctx, ent("p", "r"), store.Replace)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		err = tbl.Delete(ctx, "p", "r", store.ETagAny)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		_, err = tbl.Query(ctx, store.Query{})
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		// The service reports a batch against a missing table on its first
		// operation; the index is not part of the rule.
		_, err = tbl.Transact(ctx, []store.Action{{Kind: store.ActionInsert, Entity: ent("p", "r")}})
		wantErr(t, err, store.CodeTableNotFound, 404, anyIndex)
		// None of that created the table.
		wantNoTables(t, st, tbl.Name())
	})

	s.run(t, "DeleteMissing_ResourceNotFound", func(t *testing.T) {
		st := s.h.New(t)
		err := st.DeleteTable(t.Context(), s.names.next())
		wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
	})

	s.run(t, "Delete_RemovesTableAndEntities", func(t *testing.T) {
		st, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r"))
		must(t, st.DeleteTable(t.Context(), tbl.Name()), "DeleteTable")
		_, err := tbl.Get(t.Context(), "p", "r", nil)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
		wantNoTables(t, st, tbl.Name())
		err = st.DeleteTable(t.Context(), tbl.Name())
		wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
	})

	s.run(t, "RecreateAfterDelete_TableBeingDeleted", func(t *testing.T) {
		mk := s.h.NewDeleting
		strict := mk != nil
		if !strict {
			mk = s.h.New
		}
		st := mk(t)
		name := s.names.next()
		must(t, st.CreateTable(t.Context(), name), "CreateTable")
		s.dropTableLater(t, st, name)
		must(t, st.DeleteTable(t.Context(), name), "DeleteTable")
		err := st.CreateTable(t.Context(), name)
		if err == nil && !strict {
			return // the server reclaimed the name at once
		}
		wantErr(t, err, store.CodeTableBeingDeleted, 409, noIndex)
		// While being deleted the table is gone for entity operations.
		_, err = st.Table(name).Get(t.Context(), "p", "r", nil)
		wantErr(t, err, store.CodeTableNotFound, 404, noIndex)
	})

	s.run(t, "List_PrefixAndPaging", func(t *testing.T) {
		st := s.h.New(t)
		prefix := s.names.next() + "L"
		var want []string
		for _, suffix := range []string{"e", "a", "d", "b", "c"} {
			name := prefix + suffix
			must(t, st.CreateTable(t.Context(), name), "CreateTable")
			s.dropTableLater(t, st, name)
			want = append(want, name)
		}
		slices.Sort(want)
		// A table sharing all but the last letter of the prefix is not listed.
		other := prefix[:len(prefix)-1] + "M"
		must(t, st.CreateTable(t.Context(), other), "CreateTable")
		s.dropTableLater(t, st, other)

		var got []string
		opts := store.ListTablesOptions{Prefix: prefix, Top: 2}
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("ListTables continuation never ends")
			}
			page, err := st.ListTables(t.Context(), opts)
			must(t, err, "ListTables")
			if len(page.Tables) > 2 {
				t.Errorf("ListTables with Top 2 returned %d tables", len(page.Tables))
			}
			got = append(got, tableNames(page)...)
			if page.Continuation == "" {
				break
			}
			opts.Continuation = page.Continuation
		}
		if !slices.Equal(got, want) {
			t.Errorf("ListTables(prefix %q) over pages = %v, want %v", prefix, got, want)
		}
	})

	s.run(t, "ListTop_InvalidInput", func(t *testing.T) {
		st := s.h.New(t)
		for _, top := range []int{-1, store.MaxPageSize + 1} {
			_, err := st.ListTables(t.Context(), store.ListTablesOptions{Top: top})
			wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		}
		_, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: "tk", Top: store.MaxPageSize})
		must(t, err, "ListTables with Top 1000")
	})
}

// wantNoTables checks that no table name starts with prefix (in any case
// the listing reports).
func wantNoTables(t testing.TB, st store.Store, prefix string) {
	t.Helper()
	page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: prefix})
	if err != nil {
		t.Errorf("ListTables(prefix %q): %v", prefix, err)
		return
	}
	if names := tableNames(page); len(names) > 0 {
		t.Errorf("tables %v exist, want none with prefix %q", names, prefix)
	}
}

func tableNames(p store.TablePage) []string {
	out := make([]string, 0, len(p.Tables))
	for _, ti := range p.Tables {
		out = append(out, ti.Name)
	}
	return out
}
