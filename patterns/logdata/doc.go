// Package logdata is the design guide's log data pattern: log records go
// to blobs named by time, not to tables. A table keyed by time makes one
// hot partition (every writer appends to the current one); a table spread
// over partitions makes every read by time range scan them all. Blobs
// named by period, as Azure Storage Analytics names its logs, give both
// cheap appends and reads by time range.
//
// A Writer buffers records and appends them a block at a time to append
// blobs named
//
//	<prefix>/2026/11/24/15/<writer-id>-00000001.log
//
// (UTC; Daily drops the hour), one line per record:
//
//	2026-11-24T15:04:05.123456789Z<TAB>payload<LF>
//
// with \, line feed and carriage return escaped in the payload. It rolls
// over to a new blob when the records move into another period, when a
// blob reaches MaxBlobSize or MaxBlocks blocks (at most the service's
// 50,000), and its writer id keeps several writers (processes) out of each
// other's blobs. Every append is conditional on the blob's length, so a
// block whose answer was lost is sent again safely and never lands twice;
// the store settles it by reading the blob back (driver.SettleAppend).
//
//	w, err := logdata.NewWriter(st.Container("logs"), "web", &logdata.Options{ID: "web-1"})
//	err = w.Write(ctx, []byte("GET /index.html 200"))
//	err = w.Close(ctx)
//
// A Reader lists the blobs of the periods a time range covers (one
// listing per period) and returns their records in time order:
//
//	r, err := logdata.NewReader(st.Container("logs"), "web", nil)
//	for rec, err := range r.Records(ctx, from, to) { ... }
package logdata
