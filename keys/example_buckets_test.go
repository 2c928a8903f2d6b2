package keys_test

import (
	"fmt"
	"time"

	"github.com/tablekit/tablekit/keys"
)

func ExampleBucket() {
	t := time.Date(2026, 11, 22, 11, 5, 0, 0, time.UTC)
	for _, g := range []keys.Granularity{keys.Month, keys.Day, keys.Hour, keys.Minute} {
		b, _ := keys.Bucket(t, g)
		fmt.Println(g, b)
	}
	// Output:
	// month 202611
	// day 20261122
	// hour 2026112211
	// minute 202611221105
}

func ExampleParseBucket() {
	start, err := keys.ParseBucket("2026112211", keys.Hour)
	fmt.Println(start, err)
	// Output:
	// 2026-11-22 11:00:00 +0000 UTC <nil>
}

func ExampleBuckets() {
	// The partitions holding log entries between 10:59 and 12:00.
	from := time.Date(2026, 11, 22, 10, 59, 0, 0, time.UTC)
	to := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	bs, _ := keys.Buckets(from, to, keys.Hour)
	fmt.Println(bs)
	// Output:
	// [2026112210 2026112211 2026112212]
}

func ExampleGranularity_Truncate() {
	t := time.Date(2026, 11, 22, 11, 5, 30, 0, time.UTC)
	fmt.Println(keys.Day.Truncate(t))
	// Output:
	// 2026-11-22 00:00:00 +0000 UTC
}

func ExampleGranularity_String() {
	fmt.Println(keys.Hour)
	// Output:
	// hour
}

func ExampleTableName() {
	// One table per day of login records: delete a day by deleting its table.
	name, _ := keys.TableName("Logins", time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC), keys.Day)
	fmt.Println(name)
	_, err := keys.TableName("login_", time.Now(), keys.Day)
	fmt.Println(err)
	// Output:
	// Logins20261122
	// keys: invalid table name: table name prefix "login_" has '_' at offset 5: a table name is a letter followed by letters and digits
}

func ExampleParseTableName() {
	// A retention job: delete the daily tables older than 60 days.
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cutoff := now.AddDate(0, 0, -60)
	for _, name := range []string{"Logins20260901", "Logins20261121", "Orders20260101"} {
		day, err := keys.ParseTableName("Logins", name, keys.Day)
		if err != nil {
			continue // not one of ours
		}
		fmt.Println(name, day.Before(cutoff))
	}
	// Output:
	// Logins20260901 true
	// Logins20261121 false
}

func ExampleTableNames() {
	from := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	to := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	names, _ := keys.TableNames("Logins", from, to, keys.Day)
	fmt.Println(names)
	// Output:
	// [Logins20261121 Logins20261122]
}
