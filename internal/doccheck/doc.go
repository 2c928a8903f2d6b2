// Package doccheck holds the test that keeps the repository's documents
// readable on their own: no page, README or Go comment may point at a path
// outside the repository or at the project's tracker entries, which a
// reader of the repository cannot see.
package doccheck
