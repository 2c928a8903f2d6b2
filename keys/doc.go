// Package keys is the key-design toolkit for Azure Table storage.
//
// In Table storage the PartitionKey and RowKey are the only index, so most
// of the design guide's patterns are key designs. This package makes them
// correct by construction:
//
//   - validation and an order-preserving escaping of any string into a
//     legal key ([ValidKey], [Escape], [Unescape]);
//   - compound keys whose string order equals the order of their parts
//     ([Join], [Split], [PrefixOf]);
//   - order-preserving numbers ([PadUint], [EncodeInt64], [EncodeFloat64]);
//   - .NET-compatible forward and inverted ticks ([InvertedTicks], [TicksKey]);
//   - time buckets for partitions and per-period tables ([Bucket], [TableName]);
//   - hash spreading against hot partitions ([Spread], [SpreadBuckets]);
//   - prefix and between ranges for $filter bounds ([PrefixRange], [Between]);
//   - time-ordered unique ids ([IDGenerator], [IDTime]).
//
// # Order
//
// The service sorts keys by ordinal comparison of their UTF-16 code units.
// For text made of characters below U+D800 that equals Go's byte-wise
// string order; it differs for characters U+E000-U+FFFF, which sort after
// the supplementary characters (U+10000 and up) in UTF-16 but before them
// in UTF-8. [Compare] implements the service's order, and every
// order-preservation claim in this package is stated in that order. All
// encoders whose output must sort (numbers, ticks, buckets, spread
// prefixes, ids, the escape sequences) emit ASCII only, where both orders
// agree.
//
// The package depends on the standard library only, so it can be used
// without the rest of tablekit. docs/keys.md maps each guide pattern to the
// helpers here.
package keys
