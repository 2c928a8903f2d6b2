// Package wire is the JSON wire format of the Azure Table service: the
// entity bodies tablekit sends (odata=minimalmetadata requests with
// "@odata.type" annotations wherever JSON alone would lose the type) and the
// entity and query responses it reads back (minimal or full metadata, or
// none).
//
// The encoders are plain append functions over a caller's buffer, so a
// caller that knows its fields (the mapper's compiled struct encoders) can
// write a whole entity with no reflection and no allocation beyond the
// buffer:
//
//	b = wire.AppendEntityStart(b, pk, rk)
//	b = wire.AppendInt64Prop(b, "Count", n)
//	b = wire.AppendTimeProp(b, "Due", due)
//	b = wire.AppendEntityEnd(b)
//
// The decoders are a hand-written scanner: Scan walks one entity object and
// hands each property to a callback with its EDM type resolved and its raw
// JSON token, which the Property accessors convert without building maps.
// DecodeEntity and DecodeEntities build store.Entity values on top of it.
//
// Types on the wire:
//
//	Edm.String    JSON string, no annotation
//	Edm.Boolean   true / false, no annotation
//	Edm.Int32     JSON number, no annotation
//	Edm.Int64     JSON string of decimal digits, annotated Edm.Int64
//	Edm.Double    JSON number (or "NaN", "Infinity", "-Infinity"), annotated Edm.Double
//	Edm.DateTime  "2006-01-02T15:04:05.0000000Z" (UTC, 7 fractional digits), annotated
//	Edm.Guid      "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", annotated
//	Edm.Binary    standard base64 with padding, annotated
//
// A response number without annotation is an Edm.Int32 when it is written
// without a fraction or exponent and fits in 32 bits, and an Edm.Double
// otherwise: the service (and Azurite) write a whole Double as "1.0".
package wire
