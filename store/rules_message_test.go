package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRuleMessagesNameValueAndLimit checks that every rule's message names
// what the caller needs to find the mistake: the offending entity's keys,
// the property, the offending value or its size, and the limit.
func TestRuleMessagesNameValueAndLimit(t *testing.T) {
	ent := func(pk, rk string, props map[string]any) *Entity {
		return &Entity{PartitionKey: pk, RowKey: rk, Properties: props}
	}
	many := map[string]any{}
	for i := range MaxCustomProperties + 1 {
		many[fmt.Sprintf("P%d", i)] = int32(i)
	}
	huge := map[string]any{}
	for i := range 17 {
		huge[fmt.Sprintf("B%d", i)] = make([]byte, MaxBinaryBytes)
	}
	old := time.Date(1600, 6, 1, 0, 0, 0, 0, time.UTC)
	bigBatch := make([]Action, MaxBatchActions+1)
	for i := range bigBatch {
		bigBatch[i] = Action{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}}
	}
	heavy := make([]Action, 80)
	for i := range heavy {
		heavy[i] = Action{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
			Properties: map[string]any{"B": make([]byte, MaxBinaryBytes)}}}
	}

	cases := []struct {
		name string
		err  error
		code string
		want []string // substrings the message must contain
	}{
		{"table name character", ValidateTableName("my-table"), CodeInvalidResourceName, []string{`"my-table"`, "'-'"}},
		{"table name length", ValidateTableName("ab"), CodeOutOfRangeInput, []string{`"ab"`, "2", "3 to 63"}},
		{"reserved table name", ValidateTableName("Tables"), CodeInvalidInput, []string{`"Tables"`, "reserved"}},
		{"key length", ValidateEntity(ent("p", strings.Repeat("k", MaxKeyUnits+1), nil)), CodeKeyValueTooLarge,
			[]string{"RowKey", `"kkkk`, "1025", "1024"}},
		{"key character", ValidateEntity(ent("a/b", "r", nil)), CodeOutOfRangeInput, []string{"PartitionKey", `"a/b"`, "'/'"}},
		{"key control character", ValidateEntity(ent("p", "a\tb", nil)), CodeOutOfRangeInput, []string{"RowKey", `"a\tb"`, "U+0009"}},
		{"property name length", ValidateEntity(ent("pk1", "rk1", map[string]any{strings.Repeat("N", 256): "v"})), CodePropertyNameTooLong,
			[]string{`"pk1"`, `"rk1"`, `"NNNN`, "256", "255"}},
		{"property name character", ValidateEntity(ent("pk1", "rk1", map[string]any{"bad-name": "v"})), CodePropertyNameInvalid,
			[]string{`"pk1"`, `"rk1"`, `"bad-name"`, "'-'"}},
		{"reserved property name", ValidateEntity(ent("pk1", "rk1", map[string]any{"RowKey": "v"})), CodePropertyNameInvalid,
			[]string{`"pk1"`, `"rk1"`, `"RowKey"`, "reserved"}},
		{"string size", ValidateEntity(ent("pk1", "rk1", map[string]any{"Text": strings.Repeat("x", MaxStringUnits+1)})), CodePropertyValueTooLarge,
			[]string{`"pk1"`, `"rk1"`, `"Text"`, "32768", "32767"}},
		{"binary size", ValidateEntity(ent("pk1", "rk1", map[string]any{"Blob": make([]byte, MaxBinaryBytes+1)})), CodePropertyValueTooLarge,
			[]string{`"pk1"`, `"rk1"`, `"Blob"`, "65537", "65536"}},
		{"DateTime range", ValidateEntity(ent("pk1", "rk1", map[string]any{"When": old})), CodeOutOfRangeInput,
			[]string{`"pk1"`, `"rk1"`, `"When"`, "1600-06-01", "1601-01-01", "9999-12-31"}},
		{"unsupported type", ValidateEntity(ent("pk1", "rk1", map[string]any{"Count": uint16(3)})), CodeInvalidValueType,
			[]string{`"pk1"`, `"rk1"`, `"Count"`, "uint16", "int32"}},
		{"too many properties", ValidateEntity(ent("pk1", "rk1", many)), CodeTooManyProperties, []string{`"pk1"`, `"rk1"`, "253", "252"}},
		{"entity size", ValidateEntity(ent("pk1", "rk1", huge)), CodeEntityTooLarge, []string{`"pk1"`, `"rk1"`, "1048576"}},
		{"malformed ETag", ValidateETag(ETag("abc")), CodeInvalidInput, []string{`"abc"`}},
		{"$top", ValidateTop(1001), CodeInvalidInput, []string{"1001", "1000"}},
		{"batch size", ValidateTransaction(bigBatch), CodeInvalidInput, []string{"101", "100"}},
		{"batch partitions", ValidateTransaction([]Action{
			{Kind: ActionInsert, Entity: Entity{PartitionKey: "p1", RowKey: "a"}},
			{Kind: ActionInsert, Entity: Entity{PartitionKey: "p2", RowKey: "b"}},
		}), CodeCommandsInBatchActOnDifferentPartitions, []string{`"p1"`, `"p2"`, "action 1"}},
		{"batch duplicate row", ValidateTransaction([]Action{
			{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "dup"}},
			{Kind: ActionDelete, Entity: Entity{PartitionKey: "p", RowKey: "dup"}, IfMatch: ETagAny},
		}), CodeInvalidDuplicateRow, []string{`"dup"`, "0", "1"}},
		{"batch body size", ValidateTransaction(heavy), CodeRequestBodyTooLarge, []string{fmt.Sprint(MaxBatchBytes)}},
		{"property in a batch", ValidateTransaction([]Action{
			{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "a"}},
			{Kind: ActionInsert, Entity: Entity{PartitionKey: "p", RowKey: "b", Properties: map[string]any{"V": 1}}},
		}), CodeInvalidValueType, []string{`"p"`, `"b"`, `"V"`, "int"}},
	}
	for _, c := range cases {
		var se *Error
		if !errors.As(c.err, &se) || se.Code != c.code {
			t.Errorf("%s: got %v, want code %s", c.name, c.err, c.code)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(se.Message, w) {
				t.Errorf("%s: message %q does not contain %q", c.name, se.Message, w)
			}
		}
	}
}
