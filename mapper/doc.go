// Package mapper maps Go structs to Azure Table entities and back, and
// gives typed repositories, partition handles, heterogeneous-table
// registries and typed filters on top of any store.Store.
//
// A struct maps field by field. The tag `table:"Name,opts"` renames a
// property ("-" skips the field) and takes these options:
//
//	omitempty  do not store the zero value
//	pk, rk     the field is the PartitionKey or RowKey (a string kind)
//	etag       the field receives the entity's ETag (store.ETag or a string kind)
//	timestamp  the field receives the service's Timestamp (time.Time)
//	json       store a struct, slice or map as a JSON string (size-checked)
//	large      the value may pass the property limits: patterns/large keeps it
//	           in a blob when it does (see LargeFields)
//	encrypt    the property is encrypted on the client: EncryptedProperties
//	           lists such properties for package encryption's tables
//	extra      a map[string]any that keeps the properties the struct does not
//	           know, so that replacing an entity never deletes them
//
// A type that computes its keys implements KeyMaker (and KeySetter to get
// them back on decode) instead of tagging fields. Each struct type is
// compiled once into a codec (a precomputed field list) and cached; a tag
// error is reported, with the field's name, the first time the type is used.
//
// See docs/mapping.md for the type table and the decode rules.
package mapper
