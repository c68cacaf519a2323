// Package proto holds the gRPC API of streamd: the service definition in
// streamd/v1/streamd.proto and the Go code generated from it in package
// streamdv1 (import path streamd/api/proto/streamd/v1).
//
// The generated files are committed. To regenerate them after editing the
// .proto, run
//
//	go generate ./api/proto/
//
// which runs buf's built-in compiler with the plugins pinned in buf.gen.yaml;
// no protoc and no installed plugins are needed, only the Go toolchain and
// the Go module proxy. Regeneration is deterministic: running it twice gives
// identical files.
package proto

//go:generate go run github.com/bufbuild/buf/cmd/buf@v1.75.0 generate
