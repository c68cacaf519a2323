package main

import (
	"context"
	"testing"

	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestReflectionListsMethods: gRPC reflection describes the methods of
// Streamd with their request types, so that grpcurl can call them.
func TestReflectionListsMethods(t *testing.T) {
	d, _ := startDaemon(t, nil)
	conn := dialGRPC(t, d.GRPCAddr())
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req := &reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "streamd.v1.Streamd"}}
	if err := stream.Send(req); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	inputs := make(map[string]string) // method name → request type
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(b, &fd); err != nil {
			t.Fatal(err)
		}
		for _, sv := range fd.GetService() {
			if sv.GetName() != "Streamd" {
				continue
			}
			for _, m := range sv.GetMethod() {
				inputs[m.GetName()] = m.GetInputType()
			}
		}
	}
	for method, input := range map[string]string{
		"HierarchicalHeavyHitters": ".streamd.v1.HierarchicalHeavyHittersRequest",
		"CorrelatedSum":            ".streamd.v1.CorrelatedSumRequest",
	} {
		if got, ok := inputs[method]; !ok || got != input {
			t.Errorf("reflection describes %s with request %q (listed %v), want %q", method, got, ok, input)
		}
	}
}
