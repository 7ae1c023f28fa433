// A module of its own so that `go vet ./...` and `go build ./...` in the
// repository root skip docs/peers (and its node_modules).
module folio/docs/peers

go 1.26
