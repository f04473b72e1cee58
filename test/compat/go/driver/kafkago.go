package main

// segmentio/kafka-go (Debian: golang-github-segmentio-kafka-go-dev 0.2.1, 2018). Its requests
// have fixed versions: Metadata v1, CreateTopics v0, DeleteTopics v1, ListOffsets v1,
// FindCoordinator v0, JoinGroup v1, SyncGroup v0, Heartbeat v0, LeaveGroup v0, OffsetCommit v2,
// OffsetFetch v1 (all served), and Produce v2 / Fetch v2, which carry message format v1 (magic
// 1 message sets) and are not served: the broker stores and serves magic-2 record batches only
// (Produce v3+, Fetch v4+; Kafka 4.0 dropped the same versions, KIP-896). So its Writer and the
// Reader's fetches cannot work against this broker; kafkago-rw shows it, kafkago-group checks the
// group protocol (join, sync, heartbeats, commits, leave) that does work.

import (
	"context"
	"fmt"
	"log"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Shopify/sarama"
	kafka "github.com/segmentio/kafka-go"
	kgzip "github.com/segmentio/kafka-go/gzip"
)

func kgLogger() *log.Logger {
	if logOut.Writer() == nil {
		return nil
	}
	return logOut
}

// kgConn opens a kafka-go Conn through the sniffer, so the versions it writes are recorded.
func kgConn(sn *sniffer, addr, topic string, partition int) *kafka.Conn {
	raw, err := sn.Dial("tcp", addr)
	check(err, "dial "+addr)
	return kafka.NewConn(raw, topic, partition)
}

// kafkago-admin: Conn.CreateTopics (3 partitions, retention.ms) twice (the second is a no-op for
// kafka-go), ReadPartitions, the partition leader's ReadOffsets, DeleteTopics, and the topic gone
// from ReadPartitions of all topics. The config is cross-checked with sarama's DescribeConfig.
func kafkagoAdmin(o *options) {
	sn := newSniffer()
	conn := kgConn(sn, o.bootstrap, "", 0)
	defer conn.Close()
	check(conn.SetDeadline(time.Now().Add(30*time.Second)), "SetDeadline")
	tc := kafka.TopicConfig{
		Topic:             o.topic,
		NumPartitions:     3,
		ReplicationFactor: 1,
		ConfigEntries:     []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "3600000"}},
	}
	check(conn.CreateTopics(tc), "CreateTopics")
	// kafka-go maps TOPIC_ALREADY_EXISTS to success: a wrong error code would surface here.
	check(conn.CreateTopics(tc), "CreateTopics of an existing topic")

	parts, err := conn.ReadPartitions(o.topic)
	check(err, "ReadPartitions")
	sort.Slice(parts, func(a, b int) bool { return parts[a].ID < parts[b].ID })
	if len(parts) != 3 {
		fail("ReadPartitions: %d partitions, expected 3", len(parts))
	}
	for i, p := range parts {
		if p.ID != i || p.Topic != o.topic || p.Leader.Port == 0 || len(p.Replicas) != 1 || len(p.Isr) != 1 {
			fail("ReadPartitions partition %d: %+v", i, p)
		}
	}
	leader := net.JoinHostPort(parts[0].Leader.Host, strconv.Itoa(parts[0].Leader.Port))
	lc := kgConn(sn, leader, o.topic, 0)
	check(lc.SetDeadline(time.Now().Add(10*time.Second)), "SetDeadline")
	first, last, err := lc.ReadOffsets()
	check(err, "ReadOffsets")
	lc.Close()
	if first != 0 || last != 0 {
		fail("ReadOffsets of the new partition 0: %d..%d, expected 0..0", first, last)
	}

	// Cross-check the config with sarama (kafka-go 0.2.1 has no DescribeConfigs).
	cfg := saramaConfig(o, sn)
	admin, err := sarama.NewClusterAdmin([]string{o.bootstrap}, cfg)
	checkS(err, "sarama ClusterAdmin")
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: o.topic})
	checkS(err, "sarama DescribeConfig")
	admin.Close()
	e, _ := configValue(entries, "retention.ms")
	if e.Value != "3600000" {
		fail("retention.ms of the topic created by kafka-go is %q, expected 3600000", e.Value)
	}

	check(conn.DeleteTopics(o.topic), "DeleteTopics")
	waitFor("the deleted topic to leave ReadPartitions()", 10*time.Second, func() bool {
		all, err := conn.ReadPartitions()
		check(err, "ReadPartitions of all topics")
		for _, p := range all {
			if p.Topic == o.topic {
				return false
			}
		}
		return true
	})
	emit(map[string]interface{}{
		"created":      true,
		"partitions":   len(parts),
		"leader":       leader,
		"offsets":      []int64{first, last},
		"retention.ms": e.Value,
		"deleted":      true,
		"versions":     sn.versions(),
	})
}

// kafkago-group: two Readers with one GroupID on a --partitions topic. The coordinator (seen
// through sarama's DescribeConsumerGroups) must show a Stable group of two kafka-go members that
// split the partitions; each Reader commits an offset for each partition it owns
// (CommitMessages, synchronous: CommitInterval 0) and the group's committed offsets must be
// those; after Close the group becomes Empty and keeps its offsets. Records are not read: the
// Readers' fetches use Fetch v2, which is not served (see kafkago-rw).
//
// kafka-go 0.2.1's Reader.Close never sends LeaveGroup: it cancels the Reader's context (r.stop())
// and then dials the coordinator with that cancelled context (r.coordinator() uses r.stctx), so
// the dial fails at once and the members leave by session timeout (6 s here, the broker's
// minimum). A client bug, fixed in later kafka-go; the test checks the broker's log for it.
func kafkagoGroup(o *options) {
	if o.group == "" {
		fail("--group is required")
	}
	sn := newSniffer()
	newReader := func(name string) *kafka.Reader {
		return kafka.NewReader(kafka.ReaderConfig{
			Brokers:           []string{o.bootstrap},
			GroupID:           o.group,
			Topic:             o.topic,
			Dialer:            &kafka.Dialer{ClientID: "go-compat-" + name, Timeout: 10 * time.Second},
			HeartbeatInterval: 500 * time.Millisecond,
			SessionTimeout:    6 * time.Second,
			RebalanceTimeout:  10 * time.Second,
			Logger:            kgLogger(),
			ErrorLogger:       kgLogger(),
		})
	}
	readers := map[string]*kafka.Reader{"kg-1": newReader("kg-1"), "kg-2": newReader("kg-2")}
	cfg := saramaConfig(o, sn)
	client, err := sarama.NewClient([]string{o.bootstrap}, cfg)
	checkS(err, "sarama client")
	defer client.Close()
	admin, err := sarama.NewClusterAdmin([]string{o.bootstrap}, cfg)
	checkS(err, "sarama ClusterAdmin")
	defer admin.Close()
	parts, err := client.Partitions(o.topic)
	checkS(err, "Partitions")

	// Wait for a Stable group whose two members (by client id) split the partitions.
	owned := map[string][]int32{}
	var last string
	waitFor("a Stable group of the two kafka-go Readers splitting the partitions", 30*time.Second, func() bool {
		descs, err := admin.DescribeConsumerGroups([]string{o.group})
		checkS(err, "DescribeConsumerGroups")
		last = fmt.Sprintf("%+v", descs)
		if len(descs) != 1 || descs[0].State != "Stable" || len(descs[0].Members) != 2 ||
			descs[0].ProtocolType != "consumer" {
			return false
		}
		owned = map[string][]int32{}
		count := map[int32]int{}
		for _, md := range descs[0].Members {
			asg, err := md.GetMemberAssignment()
			if err != nil {
				fail("kafka-go member assignment does not decode: %v", err)
			}
			ps := append([]int32(nil), asg.Topics[o.topic]...)
			sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
			owned[strings.TrimPrefix(md.ClientId, "go-compat-")] = ps
			for _, p := range ps {
				count[p]++
			}
		}
		for _, p := range parts {
			if count[p] != 1 {
				return false
			}
		}
		return len(owned["kg-1"]) > 0 && len(owned["kg-2"]) > 0
	})
	logOut.Printf("[driver] group: %s", last)

	// Each Reader commits offset 10+p (CommitMessages commits the message offset + 1).
	want := map[int32]int64{}
	for name, r := range readers {
		msgs := []kafka.Message{}
		for _, p := range owned[name] {
			msgs = append(msgs, kafka.Message{Topic: o.topic, Partition: int(p), Offset: int64(9 + p)})
			want[p] = int64(10 + p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		check(r.CommitMessages(ctx, msgs...), "CommitMessages "+name)
		cancel()
	}
	committed := committedOffsets(admin, o.group, o.topic, parts)
	if !sameOffsets(committed, want) {
		fail("committed offsets %v, the Readers committed %v", committed, want)
	}
	for name, r := range readers {
		check(r.Close(), "Reader.Close")
		logOut.Printf("[driver] %s closed", name)
	}
	waitFor("the group to be Empty after both Readers closed", 20*time.Second, func() bool {
		descs, err := admin.DescribeConsumerGroups([]string{o.group})
		checkS(err, "DescribeConsumerGroups")
		return len(descs) == 1 && descs[0].State == "Empty" && len(descs[0].Members) == 0
	})
	if after := committedOffsets(admin, o.group, o.topic, parts); !sameOffsets(after, want) {
		fail("after the Readers left the committed offsets are %v, expected %v", after, want)
	}
	logOut.Printf("[driver] group checked")
	emit(map[string]interface{}{
		"owned":     owned,
		"committed": jsonOffsets(committed),
		"empty":     true,
		"versions":  sn.versions(),
	})
}

// kafkago-rw: a Writer (RequiredAcks all, the Hash balancer, gzip) writes --count keyed records;
// a Reader with GroupID reads them all back and commits. If the Writer fails, the records are
// written with sarama instead so the Reader is still tried. Fails (listing both errors) unless
// both work; with this broker both fail, see the top of this file.
func kafkagoReadWrite(o *options) {
	const size = 100
	w := kafka.NewWriter(kafka.WriterConfig{
		Brokers:          []string{o.bootstrap},
		Topic:            o.topic,
		Balancer:         &kafka.Hash{},
		RequiredAcks:     -1,
		MaxAttempts:      3,
		BatchTimeout:     50 * time.Millisecond,
		CompressionCodec: kgzip.NewCompressionCodec(),
		Logger:           kgLogger(),
		ErrorLogger:      kgLogger(),
	})
	msgs := make([]kafka.Message, o.count)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(recordKey("kw", i)), Value: []byte(recordValue("kw", i, size))}
	}
	problems := []string{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	werr := w.WriteMessages(ctx, msgs...)
	cancel()
	w.Close()
	if werr != nil {
		problems = append(problems, fmt.Sprintf("Writer.WriteMessages: %v", werr))
		produceKeyed(o, newSniffer(), "kw", o.count, size)
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        []string{o.bootstrap},
		GroupID:        o.group,
		Topic:          o.topic,
		SessionTimeout: 10 * time.Second,
		MaxWait:        500 * time.Millisecond,
		Logger:         kgLogger(),
		ErrorLogger:    kgLogger(),
	})
	seen := map[string]bool{}
	// The Reader retries failed fetches forever (logging them), so bound the wait.
	ctx, cancel = context.WithTimeout(context.Background(), 8*time.Second)
	for len(seen) < o.count {
		m, err := r.ReadMessage(ctx) // commits (synchronously) as it reads
		if err != nil {
			problems = append(problems, fmt.Sprintf("Reader.ReadMessage after %d records: %v", len(seen), err))
			break
		}
		i, err := strconv.Atoi(strings.TrimPrefix(string(m.Key), "kw-k"))
		if err != nil || string(m.Value) != recordValue("kw", i, size) {
			problems = append(problems, fmt.Sprintf("record %s@%d: value %q", m.Key, m.Offset, m.Value))
			break
		}
		seen[string(m.Key)] = true
	}
	cancel()
	r.Close()
	if len(problems) > 0 {
		fail("%s", strings.Join(problems, "; "))
	}
	emit(map[string]interface{}{"written": o.count, "read": len(seen)})
}
