package main

// Shopify/sarama (Debian: golang-github-shopify-sarama-dev 1.22.1, whose newest Config.Version is
// V2_2_0_0). With Version >= V0_11_0_0 it writes magic-2 record batches (Produce v3, Fetch v4),
// which is what this broker serves; its default Version (V0_8_2_0) speaks Produce v0 and
// ListOffsets v0, which the broker does not serve (see sarama-default).

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

// describeErr names a Kafka error code along with its text.
func describeErr(err error) string {
	var kerr sarama.KError
	if errors.As(err, &kerr) {
		return fmt.Sprintf("%v (Kafka error %d)", err, int16(kerr))
	}
	var terr *sarama.TopicError
	if errors.As(err, &terr) {
		return fmt.Sprintf("%v (Kafka error %d)", err, int16(terr.Err))
	}
	if perrs, ok := err.(sarama.ProducerErrors); ok && len(perrs) > 0 {
		return fmt.Sprintf("%d records failed, first: %s", len(perrs), describeErr(perrs[0].Err))
	}
	return fmt.Sprint(err)
}

func checkS(err error, what string) {
	if err != nil {
		fail("%s: %s", what, describeErr(err))
	}
}

func saramaConfig(o *options, sn *sniffer) *sarama.Config {
	sarama.Logger = logOut
	c := sarama.NewConfig()
	if o.version != "default" {
		v, err := sarama.ParseKafkaVersion(o.version)
		check(err, "--version")
		c.Version = v
	}
	c.ClientID = "go-compat-" + subcommand
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = sn
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	return c
}

// producerConfig: acks=all, idempotent (so one request in flight per connection).
func producerConfig(o *options, sn *sniffer) *sarama.Config {
	c := saramaConfig(o, sn)
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Idempotent = true
	c.Net.MaxOpenRequests = 1
	c.Producer.Retry.Max = 5
	c.Producer.Return.Successes = true
	c.Producer.Partitioner = sarama.NewHashPartitioner
	switch o.codec {
	case "none":
		c.Producer.Compression = sarama.CompressionNone
	case "gzip":
		c.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		c.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		c.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		c.Producer.Compression = sarama.CompressionZSTD
	default:
		fail("unknown codec %q", o.codec)
	}
	return c
}

func newMessage(topic, prefix string, i, size int) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{
		Topic:   topic,
		Key:     sarama.StringEncoder(recordKey(prefix, i)),
		Value:   sarama.StringEncoder(recordValue(prefix, i, size)),
		Headers: []sarama.RecordHeader{{Key: []byte("i"), Value: []byte(strconv.Itoa(i))}},
	}
}

// produceKeyed sends count keyed records (the first 20 one at a time, then batches of 250) and
// returns them with the partition and offset each was acknowledged at.
func produceKeyed(o *options, sn *sniffer, prefix string, count, size int) []*sarama.ProducerMessage {
	client, err := sarama.NewClient([]string{o.bootstrap}, producerConfig(o, sn))
	checkS(err, "producer client")
	defer client.Close()
	prod, err := sarama.NewSyncProducerFromClient(client)
	checkS(err, "NewSyncProducer")
	defer prod.Close()
	msgs := make([]*sarama.ProducerMessage, count)
	for i := range msgs {
		msgs[i] = newMessage(o.topic, prefix, i, size)
	}
	i := 0
	for ; i < count && i < 20; i++ {
		p, off, err := prod.SendMessage(msgs[i])
		checkS(err, fmt.Sprintf("SendMessage %d", i))
		if p != msgs[i].Partition || off != msgs[i].Offset {
			fail("SendMessage %d returned %d@%d, the message says %d@%d", i, off, p,
				msgs[i].Offset, msgs[i].Partition)
		}
	}
	for ; i < count; i += 250 {
		end := i + 250
		if end > count {
			end = count
		}
		checkS(prod.SendMessages(msgs[i:end]), fmt.Sprintf("SendMessages %d..%d", i, end-1))
	}
	return msgs
}

// byPartition groups record indexes by partition, in send order, and checks that each
// partition's offsets are exactly base[p], base[p]+1, ... in send order.
func byPartition(msgs []*sarama.ProducerMessage, base map[int32]int64) map[int32][]int {
	out := map[int32][]int{}
	for i, m := range msgs {
		want := base[m.Partition] + int64(len(out[m.Partition]))
		if m.Offset != want {
			fail("record %d acknowledged at %d@%d, expected offset %d (send order)", i, m.Offset,
				m.Partition, want)
		}
		out[m.Partition] = append(out[m.Partition], i)
	}
	return out
}

func partitionCounts(per map[int32][]int) map[string]int {
	out := map[string]int{}
	for p, idx := range per {
		out[strconv.Itoa(int(p))] = len(idx)
	}
	return out
}

// sarama-produce-consume: a SyncProducer (acks=all, idempotent, --codec) writes --count keyed
// records with a header; partition consumers from OffsetOldest read every partition back and
// each record is checked (offset, key, value, header, timestamp) in order.
func saramaProduceConsume(o *options) {
	sn := newSniffer()
	const size = 300
	start := time.Now()
	msgs := produceKeyed(o, sn, "pc", o.count, size)
	per := byPartition(msgs, map[int32]int64{})
	if len(per) != o.partitions {
		fail("records went to %d partitions, the topic has %d", len(per), o.partitions)
	}

	cc := saramaConfig(o, sn)
	cc.Consumer.Return.Errors = true
	client, err := sarama.NewClient([]string{o.bootstrap}, cc)
	checkS(err, "consumer client")
	defer client.Close()
	parts, err := client.Partitions(o.topic)
	checkS(err, "Partitions")
	if len(parts) != o.partitions {
		fail("metadata lists %d partitions, expected %d", len(parts), o.partitions)
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	checkS(err, "NewConsumer")
	defer consumer.Close()
	var wg sync.WaitGroup
	for _, p := range parts {
		pc, err := consumer.ConsumePartition(o.topic, p, sarama.OffsetOldest)
		checkS(err, fmt.Sprintf("ConsumePartition %d", p))
		wg.Add(1)
		go func(p int32, pc sarama.PartitionConsumer) {
			defer wg.Done()
			defer pc.Close()
			for j, i := range per[p] {
				var m *sarama.ConsumerMessage
				select {
				case m = <-pc.Messages():
				case err := <-pc.Errors():
					fail("partition %d: %s", p, describeErr(err))
				}
				key, val := recordKey("pc", i), recordValue("pc", i, size)
				if m.Offset != int64(j) || string(m.Key) != key || string(m.Value) != val {
					fail("partition %d position %d: got %s@%d, expected %s@%d", p, j, m.Key,
						m.Offset, key, j)
				}
				if len(m.Headers) != 1 || string(m.Headers[0].Key) != "i" ||
					string(m.Headers[0].Value) != strconv.Itoa(i) {
					fail("partition %d offset %d: headers %v, expected i=%d", p, j, m.Headers, i)
				}
				if m.Timestamp.Before(start.Add(-time.Minute)) || m.Timestamp.After(time.Now().Add(time.Minute)) {
					fail("partition %d offset %d: timestamp %v is not the produce time", p, j, m.Timestamp)
				}
			}
			if hwm := pc.HighWaterMarkOffset(); hwm != int64(len(per[p])) {
				fail("partition %d: high watermark %d, expected %d", p, hwm, len(per[p]))
			}
		}(p, pc)
	}
	wg.Wait()

	// From the middle of each partition (inside a compressed batch when --codec is set): the
	// first record delivered is the one asked for.
	for _, p := range parts {
		mid := int64(len(per[p]) / 2)
		pc, err := consumer.ConsumePartition(o.topic, p, mid)
		checkS(err, fmt.Sprintf("ConsumePartition %d at %d", p, mid))
		select {
		case m := <-pc.Messages():
			if m.Offset != mid || string(m.Key) != recordKey("pc", per[p][mid]) {
				fail("partition %d from offset %d: first record %s@%d", p, mid, m.Key, m.Offset)
			}
		case err := <-pc.Errors():
			fail("partition %d from offset %d: %s", p, mid, describeErr(err))
		case <-time.After(10 * time.Second):
			fail("partition %d from offset %d: nothing in 10 s", p, mid)
		}
		pc.Close()
	}

	// Live: a consumer at OffsetNewest of partition 0 (a fetch long-poll) gets a record produced
	// after it started.
	tail, err := consumer.ConsumePartition(o.topic, 0, sarama.OffsetNewest)
	checkS(err, "ConsumePartition newest")
	time.Sleep(300 * time.Millisecond)
	lc := producerConfig(o, sn)
	lc.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer([]string{o.bootstrap}, lc)
	checkS(err, "NewSyncProducer")
	live := newMessage(o.topic, "live", 0, 50)
	live.Partition = 0
	_, off, err := prod.SendMessage(live)
	checkS(err, "SendMessage live")
	prod.Close()
	select {
	case m := <-tail.Messages():
		if m.Offset != off || string(m.Key) != recordKey("live", 0) {
			fail("live consumer got %s@%d, expected %s@%d", m.Key, m.Offset, recordKey("live", 0), off)
		}
	case err := <-tail.Errors():
		fail("live consumer: %s", describeErr(err))
	case <-time.After(10 * time.Second):
		fail("live consumer: the record produced at %d did not arrive in 10 s", off)
	}
	tail.Close()

	emit(map[string]interface{}{
		"produced":   len(msgs),
		"consumed":   len(msgs),
		"partitions": partitionCounts(per),
		"codec":      o.codec,
		"version":    o.version,
		"versions":   sn.versions(),
	})
}

// --- consumer group ----------------------------------------------------------------------------

type groupEvent struct {
	gen int32
	p   int32
	off int64
	key string
}

type session struct {
	gen    int32
	claims []int32
}

type groupMember struct {
	name     string
	topic    string
	group    sarama.ConsumerGroup
	mu       sync.Mutex
	sessions []session
	events   []groupEvent
	errs     []string
	cancel   context.CancelFunc
	done     chan struct{}
	delay    time.Duration // per record, so a rebalance can happen mid-stream
}

func (m *groupMember) Setup(s sarama.ConsumerGroupSession) error {
	claims := append([]int32(nil), s.Claims()[m.topic]...)
	sort.Slice(claims, func(a, b int) bool { return claims[a] < claims[b] })
	m.mu.Lock()
	m.sessions = append(m.sessions, session{s.GenerationID(), claims})
	m.mu.Unlock()
	logOut.Printf("[driver] member %s: generation %d, partitions %v", m.name, s.GenerationID(), claims)
	return nil
}

func (m *groupMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (m *groupMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	// Stop as soon as the session ends (a rebalance), as sarama's examples do, rather than
	// draining what was already fetched: the partition's next owner starts from our commits.
	for {
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			m.mu.Lock()
			m.events = append(m.events, groupEvent{s.GenerationID(), msg.Partition, msg.Offset, string(msg.Key)})
			m.mu.Unlock()
			time.Sleep(m.delay)
			s.MarkMessage(msg, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func (m *groupMember) current() session {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sessions) == 0 {
		return session{gen: -1}
	}
	return m.sessions[len(m.sessions)-1]
}

func (m *groupMember) snapshot() []groupEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]groupEvent(nil), m.events...)
}

func startMember(o *options, sn *sniffer, name string, delay time.Duration) *groupMember {
	c := saramaConfig(o, sn)
	c.ClientID = "go-compat-" + name
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.CommitInterval = 200 * time.Millisecond
	if !o.retention0 {
		// sarama 1.22 sends OffsetCommit v1 when Retention is 0 (its default) and v2 otherwise;
		// the broker serves both (v0-v9). --retention0 keeps the default, so v1.
		c.Consumer.Offsets.Retention = 7 * 24 * time.Hour
	}
	c.Consumer.Return.Errors = true
	c.Consumer.Group.Session.Timeout = 10 * time.Second
	c.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	c.Consumer.Group.Rebalance.Retry.Backoff = 200 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{o.bootstrap}, o.group, c)
	checkS(err, "NewConsumerGroup "+name)
	ctx, cancel := context.WithCancel(context.Background())
	m := &groupMember{name: name, topic: o.topic, group: g, cancel: cancel, done: make(chan struct{}),
		delay: delay}
	go func() {
		for err := range g.Errors() {
			m.mu.Lock()
			m.errs = append(m.errs, describeErr(err))
			m.mu.Unlock()
			logOut.Printf("[driver] member %s error: %s", name, describeErr(err))
		}
	}()
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{o.topic}, m); err != nil && ctx.Err() == nil {
				m.mu.Lock()
				m.errs = append(m.errs, "Consume: "+describeErr(err))
				m.mu.Unlock()
				logOut.Printf("[driver] member %s Consume: %s", name, describeErr(err))
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	return m
}

// stop ends the session (sarama commits the marked offsets as it releases it), then Close leaves
// the group.
func (m *groupMember) stop() {
	m.cancel()
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		fail("member %s did not end its session in 20 s", m.name)
	}
	checkS(m.group.Close(), "Close "+m.name)
}

func waitFor(what string, d time.Duration, cond func() bool) {
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			fail("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func committedOffsets(admin sarama.ClusterAdmin, group, topic string, parts []int32) map[int32]int64 {
	r, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: parts})
	checkS(err, "ListConsumerGroupOffsets")
	out := map[int32]int64{}
	for _, p := range parts {
		b := r.GetBlock(topic, p)
		if b == nil {
			fail("ListConsumerGroupOffsets: no block for partition %d", p)
		}
		if b.Err != sarama.ErrNoError {
			fail("ListConsumerGroupOffsets partition %d: %s", p, describeErr(b.Err))
		}
		out[p] = b.Offset
	}
	return out
}

func endOffsets(client sarama.Client, topic string, parts []int32) map[int32]int64 {
	out := map[int32]int64{}
	for _, p := range parts {
		off, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		checkS(err, fmt.Sprintf("GetOffset newest %d", p))
		out[p] = off
	}
	return out
}

func sameOffsets(a, b map[int32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for p, o := range a {
		if b[p] != o {
			return false
		}
	}
	return true
}

func jsonOffsets(m map[int32]int64) map[string]int64 {
	out := map[string]int64{}
	for p, o := range m {
		out[strconv.Itoa(int(p))] = o
	}
	return out
}

// sarama-group: ConsumerGroup members on a --partitions topic. Member a starts alone and gets
// every partition; half of --count records are produced; once a has processed some, member b
// joins mid-stream and the group rebalances into a generation where a and b split the
// partitions (DescribeGroups and ListGroups must agree); the other half is produced. Every record
// must be processed exactly once: a commits what it processed as it gives partitions up (sarama
// flushes marked offsets when a session ends), and b starts from those commits. Then both stop;
// the committed offsets must be the ends of the partitions; --count/2 more records are produced
// and a third member must process exactly those: nothing already committed.
// clientAndAdmin opens a sarama client and a cluster admin on one recording config.
func clientAndAdmin(o *options) (*sniffer, sarama.Client, sarama.ClusterAdmin) {
	sn := newSniffer()
	cfg := saramaConfig(o, sn)
	client, err := sarama.NewClient([]string{o.bootstrap}, cfg)
	checkS(err, "client")
	admin, err := sarama.NewClusterAdmin([]string{o.bootstrap}, cfg)
	checkS(err, "ClusterAdmin")
	return sn, client, admin
}

func saramaGroup(o *options) {
	if o.group == "" {
		fail("--group is required")
	}
	sn, client, admin := clientAndAdmin(o)
	defer client.Close()
	defer admin.Close()
	parts, err := client.Partitions(o.topic)
	checkS(err, "Partitions")
	if len(parts) != o.partitions {
		fail("metadata lists %d partitions, expected %d", len(parts), o.partitions)
	}
	seenKeys := func(ms ...*groupMember) map[string]int {
		out := map[string]int{}
		for _, m := range ms {
			for _, e := range m.snapshot() {
				out[e.key]++
			}
		}
		return out
	}
	where := map[string]*sarama.ProducerMessage{}
	base := map[int32]int64{}
	produce := func(prefix string, n int) {
		msgs := produceKeyed(o, sn, prefix, n, 100)
		for p, idx := range byPartition(msgs, base) {
			base[p] += int64(len(idx))
		}
		for _, m := range msgs {
			where[recordKey(prefix, indexOf(m))] = m
		}
	}

	// 1. Member a alone owns every partition and processes some of the first half (5 ms each).
	a := startMember(o, sn, "a", 5*time.Millisecond)
	waitFor("member a to own every partition", 30*time.Second, func() bool {
		return len(a.current().claims) == len(parts)
	})
	first := o.count / 2
	produce("g1", first)
	waitFor("member a to process records", 30*time.Second, func() bool {
		return len(a.snapshot()) >= first/4
	})

	// 2. Member b joins mid-stream: a generation where a and b split the partitions.
	b := startMember(o, sn, "b", 0)
	var stable session
	waitFor("a and b in one generation with the partitions split", 30*time.Second, func() bool {
		sa, sb := a.current(), b.current()
		if sa.gen < 0 || sa.gen != sb.gen || len(sa.claims) == 0 || len(sb.claims) == 0 {
			return false
		}
		seen := map[int32]int{}
		for _, p := range append(append([]int32{}, sa.claims...), sb.claims...) {
			seen[p]++
		}
		for _, p := range parts {
			if seen[p] != 1 {
				return false
			}
		}
		stable = sa
		return len(seen) == len(parts)
	})
	claimsA, claimsB := a.current().claims, b.current().claims

	// The coordinator's view: Stable, two consumer members whose assignments are those claims.
	descs, err := admin.DescribeConsumerGroups([]string{o.group})
	checkS(err, "DescribeConsumerGroups")
	if len(descs) != 1 || descs[0].Err != sarama.ErrNoError || descs[0].State != "Stable" ||
		descs[0].ProtocolType != "consumer" || len(descs[0].Members) != 2 {
		fail("DescribeConsumerGroups: %+v", descs)
	}
	described := map[string]string{}
	for _, md := range descs[0].Members {
		asg, err := md.GetMemberAssignment()
		checkS(err, "member assignment")
		ps := append([]int32(nil), asg.Topics[o.topic]...)
		sort.Slice(ps, func(x, y int) bool { return ps[x] < ps[y] })
		described[strings.TrimPrefix(md.ClientId, "go-compat-")] = fmt.Sprint(ps)
	}
	if described["a"] != fmt.Sprint(claimsA) || described["b"] != fmt.Sprint(claimsB) {
		fail("DescribeConsumerGroups assignments %v, the members claim a %v, b %v", described,
			claimsA, claimsB)
	}
	groups, err := admin.ListConsumerGroups()
	checkS(err, "ListConsumerGroups")
	if groups[o.group] != "consumer" {
		fail("ListConsumerGroups: %v has no consumer group %s", groups, o.group)
	}

	// 3. The second half; every record processed exactly once, after the rebalance by its owner.
	produce("g2", o.count-first)
	waitFor(fmt.Sprintf("all %d records processed by the group", o.count), 60*time.Second, func() bool {
		return len(seenKeys(a, b)) == o.count
	})
	time.Sleep(500 * time.Millisecond) // a record processed twice would show up now
	owns := func(claims []int32, p int32) bool {
		for _, c := range claims {
			if c == p {
				return true
			}
		}
		return false
	}
	counts := map[string]int{}
	for _, m := range []*groupMember{a, b} {
		for _, e := range m.snapshot() {
			w := where[e.key]
			if w == nil || w.Partition != e.p || w.Offset != e.off {
				fail("member %s processed %s at %d@%d, produced elsewhere", m.name, e.key, e.off, e.p)
			}
			if e.gen > stable.gen {
				fail("member %s processed %s in generation %d: the group rebalanced after %d",
					m.name, e.key, e.gen, stable.gen)
			}
			if e.gen == stable.gen {
				if !owns(m.current().claims, e.p) {
					fail("member %s processed %d@%d, a partition it does not own", m.name, e.off, e.p)
				}
				counts[m.name]++
			}
		}
		if counts[m.name] == 0 {
			fail("member %s processed nothing after the rebalance (claims %v)", m.name, m.current().claims)
		}
	}
	// First-half records b processed: left unprocessed by a when it gave their partitions up.
	takenOver := 0
	for _, e := range b.snapshot() {
		if strings.HasPrefix(e.key, "g1-") {
			takenOver++
		}
	}
	for k, n := range seenKeys(a, b) {
		if n != 1 {
			w := where[k]
			fail("%s (%d@%d) was processed %d times across the rebalance", k, w.Offset, w.Partition, n)
		}
	}

	// 4. Both stop; their commits must be the ends of the partitions.
	a.stop()
	b.stop()
	ends := endOffsets(client, o.topic, parts)
	committed := committedOffsets(admin, o.group, o.topic, parts)
	if !sameOffsets(committed, ends) {
		fail("after both members stopped the group committed %v, the partitions end at %v (errors: a %v, b %v)",
			committed, ends, a.errs, b.errs)
	}

	// 5. More records; a new member resumes from the commits and sees exactly the new ones.
	more := o.count / 2
	msgs2 := produceKeyed(o, sn, "g3", more, 100)
	byPartition(msgs2, committed)
	c := startMember(o, sn, "c", 0)
	waitFor(fmt.Sprintf("the new member to see the %d new records", more), 60*time.Second, func() bool {
		return len(seenKeys(c)) >= more
	})
	time.Sleep(time.Second) // anything it should not see would arrive now
	for _, e := range c.snapshot() {
		if e.off < committed[e.p] {
			fail("the new member saw %d@%d, below the committed offset %d", e.off, e.p, committed[e.p])
		}
	}
	if n := len(c.snapshot()); n != more {
		fail("the new member saw %d records, expected exactly the %d new ones", n, more)
	}
	if got := c.current().claims; len(got) != len(parts) {
		fail("the new member owns %v, expected all %d partitions", got, len(parts))
	}
	c.stop()
	ends2 := endOffsets(client, o.topic, parts)
	committed2 := committedOffsets(admin, o.group, o.topic, parts)
	if !sameOffsets(committed2, ends2) {
		fail("after the new member stopped the group committed %v, the partitions end at %v", committed2, ends2)
	}
	emit(map[string]interface{}{
		"generation": stable.gen,
		"claims":     map[string][]int32{"a": claimsA, "b": claimsB},
		"processedA": len(a.snapshot()),
		"processedB": len(b.snapshot()),
		"afterSplit": counts,
		"takenOver":  takenOver,
		"committed":  jsonOffsets(committed),
		"resumed":    len(c.snapshot()),
		"committed2": jsonOffsets(committed2),
		"errors":     append(append(append([]string{}, a.errs...), b.errs...), c.errs...),
		"versions":   sn.versions(),
	})
}

// indexOf recovers a message's record index from its "i" header.
func indexOf(m *sarama.ProducerMessage) int {
	i, err := strconv.Atoi(string(m.Headers[0].Value))
	check(err, "record header")
	return i
}

// --- admin -------------------------------------------------------------------------------------

func configValue(entries []sarama.ConfigEntry, name string) (sarama.ConfigEntry, bool) {
	for _, e := range entries {
		if e.Name == name {
			return e, true
		}
	}
	return sarama.ConfigEntry{}, false
}

// sarama-admin: ClusterAdmin CreateTopic (3 partitions, retention.ms), a duplicate create,
// ListTopics, DescribeTopics, DescribeConfig, AlterConfig, CreatePartitions, Client.GetOffset
// (oldest, newest, by timestamp), DeleteRecords, DeleteTopic, DescribeCluster.
func saramaAdmin(o *options) {
	sn, client, admin := clientAndAdmin(o)
	defer client.Close()
	defer admin.Close()
	out := map[string]interface{}{}

	// sarama 1.22's DescribeCluster sends Metadata v0, which has no controller id (it reports
	// -1); the client's own metadata (v1+ from Version 0.10) has it.
	brokers, _, err := admin.DescribeCluster()
	checkS(err, "DescribeCluster")
	ctl, err := client.Controller()
	checkS(err, "Controller")
	controller := ctl.ID()
	if len(brokers) != 1 || brokers[0].ID() != controller {
		fail("DescribeCluster: %d brokers, the client's controller is %d", len(brokers), controller)
	}
	out["controller"] = controller

	retention := "3600000"
	detail := &sarama.TopicDetail{
		NumPartitions:     3,
		ReplicationFactor: 1,
		ConfigEntries:     map[string]*string{"retention.ms": &retention},
	}
	checkS(admin.CreateTopic(o.topic, detail, false), "CreateTopic")
	err = admin.CreateTopic(o.topic, detail, false)
	var terr *sarama.TopicError
	if !errors.As(err, &terr) || terr.Err != sarama.ErrTopicAlreadyExists {
		fail("a second CreateTopic returned %s, expected TOPIC_ALREADY_EXISTS", describeErr(err))
	}
	out["created"] = true

	topics, err := admin.ListTopics()
	checkS(err, "ListTopics")
	d, ok := topics[o.topic]
	if !ok {
		fail("ListTopics does not list %s", o.topic)
	}
	if d.NumPartitions != 3 || d.ReplicationFactor != 1 || d.ConfigEntries["retention.ms"] == nil ||
		*d.ConfigEntries["retention.ms"] != retention {
		fail("ListTopics: %s has %d partitions, rf %d, configs %v", o.topic, d.NumPartitions,
			d.ReplicationFactor, d.ConfigEntries)
	}
	out["listed"] = true

	md, err := admin.DescribeTopics([]string{o.topic})
	checkS(err, "DescribeTopics")
	if len(md) != 1 || md[0].Err != sarama.ErrNoError || len(md[0].Partitions) != 3 {
		fail("DescribeTopics: %+v", md)
	}
	for _, p := range md[0].Partitions {
		if p.Err != sarama.ErrNoError || p.Leader != controller || len(p.Replicas) != 1 || len(p.Isr) != 1 {
			fail("DescribeTopics partition %d: leader %d replicas %v isr %v err %v", p.ID, p.Leader,
				p.Replicas, p.Isr, p.Err)
		}
	}
	out["partitions"] = len(md[0].Partitions)

	res := sarama.ConfigResource{Type: sarama.TopicResource, Name: o.topic}
	entries, err := admin.DescribeConfig(res)
	checkS(err, "DescribeConfig")
	e, ok := configValue(entries, "retention.ms")
	if !ok || e.Value != retention || e.Default {
		fail("DescribeConfig retention.ms: %+v (found %v)", e, ok)
	}
	if e, ok := configValue(entries, "cleanup.policy"); !ok || e.Value != "delete" || !e.Default {
		fail("DescribeConfig cleanup.policy: %+v (found %v), expected the default delete", e, ok)
	}
	out["retention.ms"] = e.Value

	altered := "7200000"
	checkS(admin.AlterConfig(sarama.TopicResource, o.topic,
		map[string]*string{"retention.ms": &altered}, false), "AlterConfig")
	entries, err = admin.DescribeConfig(res)
	checkS(err, "DescribeConfig after AlterConfig")
	if e, _ := configValue(entries, "retention.ms"); e.Value != altered {
		fail("after AlterConfig retention.ms is %q, expected %s", e.Value, altered)
	}
	out["altered"] = altered

	checkS(admin.CreatePartitions(o.topic, 4, nil, false), "CreatePartitions")
	checkS(client.RefreshMetadata(o.topic), "RefreshMetadata")
	parts, err := client.Partitions(o.topic)
	checkS(err, "Partitions")
	if len(parts) != 4 {
		fail("after CreatePartitions to 4 the topic has %d partitions", len(parts))
	}
	out["grown"] = len(parts)

	// Offsets: 10 records on partition 0 stamped t0, t0+1s, ..., t0+9s.
	pc := producerConfig(o, sn)
	pc.Producer.Partitioner = sarama.NewManualPartitioner
	prod, err := sarama.NewSyncProducer([]string{o.bootstrap}, pc)
	checkS(err, "NewSyncProducer")
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	batch := []*sarama.ProducerMessage{}
	for i := 0; i < 10; i++ {
		m := newMessage(o.topic, "ts", i, 50)
		m.Partition = 0
		m.Timestamp = t0.Add(time.Duration(i) * time.Second)
		batch = append(batch, m)
	}
	checkS(prod.SendMessages(batch), "SendMessages with timestamps")
	checkS(prod.Close(), "producer Close")
	ms := func(t time.Time) int64 { return t.UnixNano() / int64(time.Millisecond) }
	offsets := map[string]int64{}
	for _, q := range []struct {
		name string
		at   int64
		want int64
	}{
		{"oldest", sarama.OffsetOldest, 0},
		{"newest", sarama.OffsetNewest, 10},
		{"t0", ms(t0), 0},
		{"t0+5s", ms(t0.Add(5 * time.Second)), 5},
		{"t0+5.5s", ms(t0.Add(5500 * time.Millisecond)), 6},
		{"after the last", ms(t0.Add(time.Minute)), -1},
	} {
		got, err := client.GetOffset(o.topic, 0, q.at)
		checkS(err, "GetOffset "+q.name)
		if got != q.want {
			fail("GetOffset %s on partition 0: %d, expected %d", q.name, got, q.want)
		}
		offsets[q.name] = got
	}
	out["offsets"] = offsets

	checkS(admin.DeleteRecords(o.topic, map[int32]int64{0: 3}), "DeleteRecords")
	if got, err := client.GetOffset(o.topic, 0, sarama.OffsetOldest); err != nil || got != 3 {
		fail("after DeleteRecords before 3 the oldest offset is %d (%v)", got, err)
	}
	out["deleteRecords"] = 3

	checkS(admin.DeleteTopic(o.topic), "DeleteTopic")
	waitFor("the deleted topic to leave ListTopics", 10*time.Second, func() bool {
		topics, err := admin.ListTopics()
		checkS(err, "ListTopics after DeleteTopic")
		_, still := topics[o.topic]
		return !still
	})
	err = admin.DeleteTopic(o.topic)
	if !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		fail("deleting the topic again returned %s, expected UNKNOWN_TOPIC_OR_PARTITION", describeErr(err))
	}
	out["deleted"] = true
	out["versions"] = sn.versions()
	emit(out)
}

// --- defaults and the broker's versions --------------------------------------------------------

// sarama-default: sarama.NewConfig() untouched (Version V0_8_2_0). Reports what works (metadata)
// and what the broker refuses, for the test to check; fails only if metadata fails.
func saramaDefault(o *options) {
	sn := newSniffer()
	o.version = "default"
	cfg := saramaConfig(o, sn)
	cfg.Producer.Return.Successes = true // required by SyncProducer, not a protocol setting
	client, err := sarama.NewClient([]string{o.bootstrap}, cfg)
	checkS(err, "client")
	defer client.Close()
	parts, err := client.Partitions(o.topic)
	checkS(err, "Partitions")
	out := map[string]interface{}{"configVersion": cfg.Version.String(), "partitions": len(parts)}
	prod, err := sarama.NewSyncProducerFromClient(client)
	checkS(err, "NewSyncProducer")
	m := newMessage(o.topic, "d", 0, 20)
	m.Headers = nil // headers need Version >= V0_11_0_0; sarama refuses them before sending
	_, _, err = prod.SendMessage(m)
	out["produceError"] = nil
	if err != nil {
		out["produceError"] = describeErr(err)
	}
	prod.Close()
	newest, err := client.GetOffset(o.topic, 0, sarama.OffsetNewest)
	out["offsetError"] = nil
	out["newest"] = newest
	if err != nil {
		out["offsetError"] = describeErr(err)
	}
	out["versions"] = sn.versions()
	emit(out)
}

// api-versions: the broker's ApiVersions answer, {"Produce": [3, 11], ...}.
func apiVersions(o *options) {
	sn := newSniffer()
	cfg := saramaConfig(o, sn)
	b := sarama.NewBroker(o.bootstrap)
	checkS(b.Open(cfg), "Open")
	defer b.Close()
	r, err := b.ApiVersions(&sarama.ApiVersionsRequest{})
	checkS(err, "ApiVersions")
	if r.Err != sarama.ErrNoError {
		fail("ApiVersions: %s", describeErr(r.Err))
	}
	out := map[string][]int16{}
	for _, k := range r.ApiVersions {
		name, ok := apiNames[k.ApiKey]
		if !ok {
			name = fmt.Sprintf("api%d", k.ApiKey)
		}
		out[name] = []int16{k.MinVersion, k.MaxVersion}
	}
	emit(out)
}
