package store

import "strings"

// ReservedPrefix starts the name of every property tablekit itself
// stores: the fence, tail and outbox rows of core/partition, the version
// core/eventual stamps on the rows it writes, the claims, heads, copies,
// lists and layouts of the patterns and the model, the metadata of
// encryption (the legacy format's two names, which other libraries
// chose, excepted). A property of yours never starts with it: the mapper
// refuses a field whose property name does, and the patterns and the
// model refuse such names where you hand them one.
const ReservedPrefix = "Tk"

// ReservedProperty reports whether name is one of tablekit's own
// property names: whether it starts with ReservedPrefix.
func ReservedProperty(name string) bool { return strings.HasPrefix(name, ReservedPrefix) }
