// Package driver is the kit for writing a tablekit backend or a wrapper
// around one. Package store is what a program that stores data uses: the
// entity, the value types, the Store, Table, Queue and Container
// interfaces, queries, actions, errors and their codes. This package holds
// what only the code behind those interfaces needs:
//
//   - the request rules a backend enforces before it does anything, with
//     the service's error codes (ValidateGet, ValidateFilterLength,
//     ValidateMessageBody, ValidateMessageCount, ValidateVisibility,
//     ResolvePut, ResolveBlobListSize, ValidateAppend, ValidateRange,
//     ValidateAccessPolicies), and the answers a backend makes where the
//     server answers otherwise (RangeNotSatisfiable);
//   - the settling of a write whose answer was lost: Settle reads the rows
//     back, SettleAppend resends an append under its position and reads the
//     blob back; AmbiguousStatus says which answers leave a write unknown;
//   - continuation tokens bound to the query they continue (SealToken,
//     OpenToken, TokenScope);
//   - the encoding of queue message bodies as message text
//     (EncodeMessageText, DecodeMessageText, MessageTextSize);
//   - the typed lane: Typed is the one probe of a table's
//     store.TypedTable, ReadEntity and EntityBuilder feed and collect an
//     EntityReader;
//   - the report of each request a backend sends, for the meter and the
//     tracing (ReportTry, ReportTryErr, WithTryObserver, TryStatus).
//
// The rules of entities, actions and transactions (store.ValidateEntity,
// store.ValidateTransaction, store.WriteSource, the size estimates) stay in
// package store: its bulk writer checks and sizes every write with them
// before sending, and programs check their keys and entities with them
// too. A backend calls them from there.
//
// Imports point down: driver imports store, store never imports driver.
// memstore and store/azstore implement the store interfaces with this kit;
// store/intercept, store/meter, store/tkotel and encryption wrap them with
// it. A program that only stores data does not need it.
package driver
