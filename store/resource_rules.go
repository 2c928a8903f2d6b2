package store

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Rules of the Queue and Blob services, shared by every backend like the
// Table rules in rules.go.

// Codes the Queue and Blob services answer for a bad query parameter, from
// the common REST error codes of Azure Storage.
const (
	// CodeOutOfRangeQueryParameterValue is the answer to numofmessages,
	// visibilitytimeout, messagettl or maxresults outside their range
	// (Azurite issue #2083 shows the service's code for a visibility
	// timeout of 0 on Get Messages).
	CodeOutOfRangeQueryParameterValue = "OutOfRangeQueryParameterValue"
	// CodeInvalidQueryParameterValue is the answer to a malformed pop
	// receipt, listing marker, or a duration that is not whole seconds.
	CodeInvalidQueryParameterValue = "InvalidQueryParameterValue"
)

// Queue and blob limits beyond those in queue.go.
const (
	// MaxBlobListResults is the most blobs one List returns, and the page
	// size when MaxResults is 0.
	MaxBlobListResults = 5000
	// MinGetVisibility is the shortest visibility timeout Get Messages
	// accepts: "larger than or equal to 1 second".
	MinGetVisibility = time.Second
	// MaxBlobNameUnits is the longest blob name in UTF-16 code units, and
	// MaxBlobPathSegments the most '/'-separated segments it may have
	// (Naming and Referencing Containers, Blobs, and Metadata).
	MaxBlobNameUnits    = 1024
	MaxBlobPathSegments = 254
)

// ValidateQueueName checks a queue name: 3 to 63 characters, lower-case
// letters, digits and single dashes, starting and ending with a letter or
// digit.
func ValidateQueueName(name string) error { return validateResourceName("queue", name) }

// ValidateContainerName checks a blob container name by the same rules as
// a queue name.
func ValidateContainerName(name string) error { return validateResourceName("container", name) }

// validateResourceName checks a queue or container name: 3 to 63
// characters, lower-case letters, digits and dashes, starting and ending
// with a letter or digit, with no two dashes in a row. A bad character is
// InvalidResourceName (400); a bad length is OutOfRangeInput (400), the
// code Azure sends for a container name of the wrong length.
func validateResourceName(kind, name string) error {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 {
				return refuse(CodeInvalidResourceName, 400,
					"%s name %q starts or ends with a dash: the first and last characters must be a letter or digit", kind, name)
			}
			if name[i-1] == '-' {
				return refuse(CodeInvalidResourceName, 400,
					"%s name %q has two dashes in a row at offset %d: consecutive dashes are not allowed", kind, name, i-1)
			}
		default:
			return refuse(CodeInvalidResourceName, 400,
				"%s name %s: character %q at offset %d is not allowed (lower-case letters, digits and single dashes)", kind, quoteTrunc(name), c, i)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return refuse(CodeOutOfRangeInput, 400,
			"%s name %s is %d characters long: the length must be 3 to 63", kind, quoteTrunc(name), len(name))
	}
	return nil
}

// ValidateBlobName checks a blob name: valid UTF-8, 1 to 1,024 characters
// (UTF-16 code units, as the service counts) and at most 254 path segments.
func ValidateBlobName(name string) error {
	if !utf8.ValidString(name) {
		return refuse(CodeInvalidResourceName, 400, "blob name %s is not valid UTF-8", quoteTrunc(name))
	}
	if n := UTF16Len(name); n < 1 || n > MaxBlobNameUnits {
		return refuse(CodeOutOfRangeInput, 400,
			"blob name %s is %d characters long: the length must be 1 to %d", quoteTrunc(name), n, MaxBlobNameUnits)
	}
	if n := strings.Count(name, "/") + 1; n > MaxBlobPathSegments {
		return refuse(CodeOutOfRangeInput, 400,
			"blob name %s has %d path segments: the limit is %d", quoteTrunc(name), n, MaxBlobPathSegments)
	}
	// "Avoid blob names that end with a dot, a forward slash, or a
	// sequence or combination of the two" is advice; control characters are
	// refused (Naming and Referencing Containers, Blobs, and Metadata).
	// Azurite stores such a name, and then every listing of the container
	// fails with 500.
	for i, r := range name {
		if r <= 0x1F || (r >= 0x7F && r <= 0x9F) {
			return refuse(CodeInvalidResourceName, 400,
				"blob name %s contains control character U+%04X at offset %d: control characters are not allowed in blob names", quoteTrunc(name), r, i)
		}
	}
	return nil
}
