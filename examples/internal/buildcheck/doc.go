// Package buildcheck holds the tests that keep the example programs cheap
// to build: a program that uses tables alone links no blob module (nor
// arrow-go, which the blob module brings), and the binaries that go build
// writes for the examples are ignored by git.
package buildcheck
