package keys_test

// The key designs of the design guide's patterns, as docs/keys.md shows
// them. Each example is run by go test, so the documentation stays true.

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/tablekit/tablekit/keys"
)

// Log tail: the ten most recent expense claims of an employee are the
// first ten rows of the partition, because the RowKey is inverted ticks.
func Example_logTail() {
	base := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	var rows []string
	for i := 0; i < 3; i++ {
		rk, _ := keys.InvertedTicks(base.Add(time.Duration(i) * time.Hour))
		rows = append(rows, rk)
	}
	sort.Strings(rows) // the order a query returns them in
	for _, rk := range rows {
		t, _ := keys.ParseInvertedTicks(rk)
		fmt.Println(rk, t.Format("15:04"))
	}
	// Output:
	// 2516069555999999999 11:00
	// 2516069591999999999 10:00
	// 2516069627999999999 09:00
}

// Intra-partition secondary index: one partition holds each employee twice,
// under "empid_" and "email_" RowKeys; padded ids make id ranges work.
func Example_intraPartitionIndex() {
	id, _ := keys.PadUint(223, 6)
	fmt.Println("empid_" + id)
	fmt.Println("email_" + "jonesj@contoso.com")
	fmt.Println(keys.Between("empid_000100", "empid_000200")) // ids 100 to 199
	fmt.Println(keys.PrefixRange("email_a"))                  // emails starting with a
	// Output:
	// empid_000223
	// email_jonesj@contoso.com
	// ge "empid_000100" and lt "empid_000200"
	// ge "email_a" and lt "email_b"
}

// Inter-partition secondary index: the prefix goes on the PartitionKey.
func Example_interPartitionIndex() {
	id, _ := keys.PadUint(223, 6)
	fmt.Println("empid_Sales", id)
	fmt.Println("email_Sales", "jonesj@contoso.com")
	// Output:
	// empid_Sales 000223
	// email_Sales jonesj@contoso.com
}

// Compound key: the review rows of an employee sit next to each other, and
// one range query fetches all of them.
func Example_compoundKey() {
	rk, _ := keys.Join("000123", "2012")
	fmt.Printf("%q\n", rk)
	r, _ := keys.PrefixOf("000123")
	fmt.Println(r)
	// Output:
	// "000123 !2012"
	// ge "000123 !" and lt "000123 \""
}

// Index entities: index rows and employee rows share a partition, the
// entity type prepended so an index row can never collide with an
// employee row; last names are escaped because they may hold any character.
func Example_indexEntities() {
	idx, _ := keys.Join("name", "Jones")
	emp, _ := keys.Join("emp", "000152")
	odd, _ := keys.Join("name", "Smith/Jones")
	fmt.Printf("%q %q %q\n", idx, emp, odd)
	all, _ := keys.PrefixOf("name") // every index row
	fmt.Println(all.Contains(odd), all.Contains(emp))
	// Output:
	// "name !Jones" "emp !000152" "name !Smith.2FJones"
	// true false
}

// Data series: one entity per employee and day holds the 24 hourly counts.
func Example_dataSeries() {
	t := time.Date(2026, 11, 22, 14, 30, 0, 0, time.UTC)
	day, _ := keys.Bucket(t, keys.Day)
	rk, _ := keys.Join("000123", day)
	hour, _ := keys.PadUint(uint64(t.Hour()), 2)
	fmt.Printf("RowKey %q, property %q\n", rk, "H"+hour)
	// Output:
	// RowKey "000123 !20261122", property "H14"
}

// High volume delete: one table per day; retention deletes whole tables.
func Example_highVolumeDelete() {
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	today, _ := keys.TableName("Logins", now, keys.Day)
	fmt.Println(today)
	day, _ := keys.ParseTableName("Logins", "Logins20260901", keys.Day)
	fmt.Println(day.Before(now.AddDate(0, 0, -60))) // older than 60 days: delete the table
	// Output:
	// Logins20261122
	// true
}

// Prepend/append anti-pattern: instead of one partition per hour, spread
// the hour over 16 partitions by a hash of the source; readers visit all.
func Example_spreadHotPartition() {
	t := time.Date(2026, 11, 22, 11, 5, 0, 0, time.UTC)
	hour, _ := keys.Bucket(t, keys.Hour)
	b, _ := keys.Spread("a", 16)
	pk := b + "_" + hour
	ids := keys.NewIDGenerator(func() time.Time { return t }, bytes.NewReader(make([]byte, 10)))
	rk, _ := ids.New() // unique, sorts by time within the partition
	fmt.Println(pk, rk)
	all, _ := keys.SpreadBuckets(16)
	fmt.Println(len(all), all[0]+"_"+hour, all[15]+"_"+hour)
	// Output:
	// 12_2026112211 01M81EWHV00000000000000000
	// 16 00_2026112211 15_2026112211
}
