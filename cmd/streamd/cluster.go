package main

import (
	"context"
	"fmt"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc/credentials"

	"streamd/cluster"
	"streamd/internal/tlsconf"
)

// peerCreds returns the credentials of the daemon's calls to its peers:
// TLS when the daemon serves TLS, trusting ClusterCA, or the system's
// roots and the daemon's own certificate (daemons that share one
// self-signed certificate then trust each other).
func peerCreds(cfg *Config) (credentials.TransportCredentials, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	file := cfg.ClusterCA
	if file == "" {
		file = cfg.TLSCert
	}
	tc, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: file, SystemRoots: true})
	if err != nil {
		return nil, fmt.Errorf("cluster ca: %w", err)
	}
	return credentials.NewTLS(tc), nil
}

// openCluster sets up what the daemon needs to answer for its group and
// to hand partitions over: its member id, connections to its peers, the
// Handoff, the Gatherer behind SCOPE_CLUSTER answers, and, with Kafka, the
// directory of the group's members.
func (d *Daemon) openCluster(ctx context.Context, dialer *kafka.Dialer) error {
	cfg := &d.Config
	memberID, err := cluster.LoadMemberID(cfg.DataDir)
	if err != nil {
		return err
	}
	creds, err := peerCreds(cfg)
	if err != nil {
		return err
	}
	d.peers = &cluster.Peers{Creds: creds, Token: cfg.Token}
	h := d.handoff
	h.Peers, h.Static, h.Timeout, h.Logger = d.peers, cfg.ClusterPeers, cfg.ClusterTimeout, d.Logger
	h.MemberID, h.Addr = memberID, d.advertiseAddr()
	if d.kafka != nil {
		h.Consumer = d.kafka
		d.dir = &cluster.Directory{
			Brokers: cfg.KafkaBrokers, Topic: cfg.ClusterTopic, Logger: d.Logger, Dialer: dialer,
			Self: cluster.Member{Group: cfg.KafkaGroup, ID: memberID, Addr: h.Addr},
		}
		h.Directory = d.dir
	}
	if err := h.Open(ctx); err != nil {
		return err
	}
	if d.kafka == nil && len(cfg.ClusterPeers) == 0 {
		return nil // no group to answer for: SCOPE_CLUSTER is refused
	}
	d.gatherer = &cluster.Gatherer{
		Pipeline: d.pipe, Self: h.Self, Static: cfg.ClusterPeers, Peers: d.peers, Timeout: cfg.ClusterTimeout,
	}
	if d.kafka == nil {
		return nil
	}
	d.gatherer.Partitions = h.Partitions
	d.gatherer.Members = d.dir.Members
	// The directory outlives the consumer at shutdown: the member stays
	// announced until the partitions it gave up are handed over.
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.dirStop = cancel
	d.wg.Go(func() {
		if err := d.dir.Run(dctx); err != nil {
			d.Logger.Error("cluster directory stopped", "err", err)
		}
	})
	return nil
}

// advertiseAddr returns the gRPC address the daemon's peers reach it at.
func (d *Daemon) advertiseAddr() string {
	if d.Config.AdvertiseAddr != "" {
		return d.Config.AdvertiseAddr
	}
	return d.GRPCAddr()
}
