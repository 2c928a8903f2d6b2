// Package encryption encrypts chosen properties of table entities on the
// client: AES-256-GCM per property under a content key drawn for every
// write and wrapped by a KeyWrapper (LocalKey: RFC 3394 AES key wrap),
// with additional data that binds each value to its table, PartitionKey,
// RowKey and property name. NewTable and Codec.Store wrap a store.Table or
// store.Store so that writes encrypt and reads decrypt, keeping the typed
// lane; Codec.Encrypt and Codec.Decrypt do it for one store.Entity;
// Rewrap rotates the key-encryption key without touching the data; a
// Codec keeps the content keys it unwrapped last (Config.KeyCacheSize),
// and package encryption/azkeyvault holds the key in Azure Key Vault. Reads
// also understand the legacy table encryption 1.0 format of the
// WindowsAzure.Storage libraries (AES-CBC, unauthenticated), which is
// written only on request (Config.Legacy). It depends on package store
// and the standard library only. See docs/encryption.md.
package encryption
