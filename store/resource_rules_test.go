package store

import (
	"strings"
	"testing"
)

func TestValidateBlobName(t *testing.T) {
	cases := []struct{ name, code string }{
		{"a", ""},
		{"dir/sub/file.json", ""},
		{"Zürich 北京 😀", ""},
		{strings.Repeat("b", MaxBlobNameUnits), ""},
		{"", CodeOutOfRangeInput},
		{strings.Repeat("b", MaxBlobNameUnits+1), CodeOutOfRangeInput},
		{strings.Repeat("a/", MaxBlobPathSegments) + "x", CodeOutOfRangeInput},
		{"a\x01b", CodeInvalidResourceName},
		{"tab\there", CodeInvalidResourceName},
		{"c1\u0085", CodeInvalidResourceName},
		{"bad\xffutf8", CodeInvalidResourceName},
	}
	for _, c := range cases {
		wantCode(t, "blob "+c.name, ValidateBlobName(c.name), c.code, 400)
	}
}

func TestValidateQueueAndContainerNames(t *testing.T) {
	cases := []struct{ name, code string }{
		{"jobs", ""}, {"a1-b2", ""}, {strings.Repeat("q", 63), ""},
		{"ab", CodeOutOfRangeInput}, {strings.Repeat("q", 64), CodeOutOfRangeInput},
		{"Jobs", CodeInvalidResourceName}, {"-jobs", CodeInvalidResourceName}, {"jobs-", CodeInvalidResourceName},
		{"jo--bs", CodeInvalidResourceName}, {"jo_bs", CodeInvalidResourceName},
	}
	for _, c := range cases {
		wantCode(t, "queue "+c.name, ValidateQueueName(c.name), c.code, 400)
		wantCode(t, "container "+c.name, ValidateContainerName(c.name), c.code, 400)
	}
}
