// Package doccheck holds the tests that keep the repository's documents
// readable on their own and true: no page, README or Go comment may point
// at a path outside the repository or at the project's tracker entries,
// which a reader of the repository cannot see, and every Go snippet of
// README.md and docs/ compiles against the current API.
package doccheck
