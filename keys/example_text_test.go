package keys_test

import (
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/keys"
)

func ExampleCompare() {
	// The service compares UTF-16 code units: U+E000 sorts after U+10000,
	// although Go's byte order says otherwise.
	fmt.Println(keys.Compare("\uE000", "\U00010000"), "\uE000" < "\U00010000")
	fmt.Println(keys.Compare("empid_000100", "empid_000199"))
	// Output:
	// 1 true
	// -1
}

func ExampleValidKey() {
	fmt.Println(keys.ValidKey("email_jonesj@contoso.com"))
	err := keys.ValidKey("2026/11/22")
	fmt.Println(errors.Is(err, keys.ErrInvalidKey))
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// keys: invalid key: "2026/11/22" contains '/' (U+002F) at offset 4: keys may not contain '/', '\', '#', '?' or control characters U+0000-U+001F, U+007F-U+009F
}

func ExampleEscape() {
	k, err := keys.Escape("docs/readme #2.md")
	fmt.Println(k, err)
	// Output:
	// docs.2Freadme 20"232.2Emd <nil>
}

func ExampleUnescape() {
	s, err := keys.Unescape("docs.2Freadme 20\"232.2Emd")
	fmt.Println(s, err)
	_, err = keys.Unescape("docs/readme")
	fmt.Println(errors.Is(err, keys.ErrMalformed))
	// Output:
	// docs/readme #2.md <nil>
	// true
}

func ExampleJoin() {
	// The guide's compound RowKey: employee id and review year.
	k, _ := keys.Join("000123", "2012")
	fmt.Printf("%q\n", k)
	// Parts may contain anything, separator and forbidden characters included.
	k, _ = keys.Join("a !b", "c/d")
	fmt.Printf("%q\n", k)
	// Output:
	// "000123 !2012"
	// "a 20!b !c.2Fd"
}

func ExampleSplit() {
	parts, err := keys.Split("a 20!b !c.2Fd")
	fmt.Printf("%q %v\n", parts, err)
	// Output:
	// ["a !b" "c/d"] <nil>
}

func ExamplePrefixOf() {
	// All review rows of employee 000123, whatever the year.
	r, _ := keys.PrefixOf("000123")
	fmt.Println(r)
	k, _ := keys.Join("000123", "2012")
	fmt.Println(r.Contains(k))
	// Output:
	// ge "000123 !" and lt "000123 \""
	// true
}

func ExamplePrefixRange() {
	// The guide's "employees whose email starts with a": ge 'email_a' lt 'email_b'.
	fmt.Println(keys.PrefixRange("email_a"))
	// A prefix ending in the largest UTF-16 unit carries into the one before.
	fmt.Println(keys.PrefixRange("a\uFFFF"))
	fmt.Println(keys.PrefixRange(""))
	// Output:
	// ge "email_a" and lt "email_b"
	// ge "a\uffff" and lt "b"
	// ge ""
}

func ExampleBetween() {
	r := keys.Between("empid_000100", "empid_000200")
	fmt.Println(r)
	fmt.Println(r.Contains("empid_000199"), r.Contains("empid_000200"))
	// Output:
	// ge "empid_000100" and lt "empid_000200"
	// true false
}

func ExampleRange_Contains() {
	r := keys.PrefixRange("empid_")
	fmt.Println(r.Contains("empid_000223"), r.Contains("email_jonesj@contoso.com"))
	// Output:
	// true false
}

func ExampleRange_Empty() {
	fmt.Println(keys.Between("b", "a").Empty(), keys.Between("a", "b").Empty())
	// Output:
	// true false
}

func ExampleRange_String() {
	fmt.Println(keys.PrefixRange("Sales"))
	// Output:
	// ge "Sales" and lt "Salet"
}

func ExampleUTF16Len() {
	// A character beyond the Basic Multilingual Plane counts twice, as the
	// service counts it against the 1,024-unit key limit.
	fmt.Println(keys.UTF16Len("abc"), keys.UTF16Len("Zürich"), keys.UTF16Len("\U0001F600"))
	// Output: 3 6 2
}
