.PHONY: test test-unit bench lint azurite azurite-install

# test runs the whole suite with the race detector against memstore and a
# pinned Azurite started on loopback for the run (scripts/with-azurite.sh
# installs it from tools/azurite when missing and stops it afterwards).
# Azurite-backed tests fail rather than skip here. The allocation budgets
# run once more without -race, which changes allocation counts.
test:
	scripts/with-azurite.sh go test -race ./...
	go test -count=1 -run 'AllocationBudgets' ./mapper/

# test-unit runs without Azurite: the Azurite-backed tests skip.
test-unit:
	go test -race ./...

# bench runs every benchmark, the Azure ones against a private Azurite.
bench:
	scripts/with-azurite.sh go test -run '^$$' -bench . -benchmem ./...

# azurite starts the pinned Azurite on 127.0.0.1 in the foreground for
# local development, prints the connection string to export, and stops it
# on Ctrl-C.
azurite:
	@scripts/with-azurite.sh scripts/azurite-serve.sh

# azurite-install installs the pinned Azurite from the committed lockfile.
azurite-install:
	cd tools/azurite && npm ci --no-audit --no-fund --loglevel=error

# lint checks formatting, go vet and staticcheck. staticcheck is pinned
# here and fetched by go run on first use: it is not a module dependency.
lint:
	gofmt -l . | (! grep .)
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
