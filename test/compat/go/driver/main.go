// Command driver exercises real Go Kafka clients against a broker for the compatibility suite
// (test/compat/go.test.ts): Shopify/sarama and segmentio/kafka-go as Debian ships them
// (golang-github-shopify-sarama-dev, golang-github-segmentio-kafka-go-dev), built offline in
// GOPATH mode against /usr/share/gocode.
//
//	driver <subcommand> --bootstrap HOST:PORT --topic T [flags]
//
// On success a subcommand prints one JSON line (its observations) on stdout and exits 0. On any
// failure it prints "FAIL <subcommand>: <reason>" as the last line of stderr and exits 1. Client
// debug logs (sarama.Logger, kafka-go Logger) go to stderr with --debug.
//
// Every connection sarama opens goes through a dialer that reads the request headers it writes,
// so each subcommand reports the (API, version) pairs the client actually sent. With --capture
// FILE the dialer also appends every request frame to FILE, one JSON line each in the format of
// scripts/capture/fake-broker.ts logs (label "sarama"), for scripts/capture/select-golden.ts.
package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"log"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type options struct {
	bootstrap  string
	topic      string
	group      string
	codec      string
	version    string
	count      int
	partitions int
	timeout    time.Duration
	debug      bool
	retention0 bool
	capture    string
}

var subcommand = "driver"

// fail ends the program with the one-line reason the test shows.
func fail(format string, args ...interface{}) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	fmt.Fprintf(os.Stderr, "FAIL %s: %s\n", subcommand, msg)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func emit(v interface{}) {
	b, err := json.Marshal(v)
	check(err, "encoding the result")
	fmt.Println(string(b))
}

func debugf(o *options, format string, args ...interface{}) {
	if o.debug {
		fmt.Fprintf(os.Stderr, "[driver] "+format+"\n", args...)
	}
}

var logOut = log.New(ioutil.Discard, "", 0)

// --- request sniffing --------------------------------------------------------------------------

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
	21: "DeleteRecords", 22: "InitProducerId", 32: "DescribeConfigs", 33: "AlterConfigs",
	37: "CreatePartitions",
}

// sniffer records the (API key, version) of every request written on the connections it wraps.
type sniffer struct {
	mu   sync.Mutex
	seen map[string]map[int16]bool
}

func newSniffer() *sniffer { return &sniffer{seen: map[string]map[int16]bool{}} }

// captureLog is the --capture file, shared by every sniffer; nil without the flag.
var captureLog *frameLog

type frameLog struct {
	mu sync.Mutex
	f  *os.File
}

// write logs one request frame (without its size prefix) as the capture harness does:
// {"label", "apiKey", "apiVersion", "clientId", "hex"}.
func (l *frameLog) write(frame []byte) {
	key := int16(binary.BigEndian.Uint16(frame[0:2]))
	version := int16(binary.BigEndian.Uint16(frame[2:4]))
	var clientID interface{}
	if len(frame) >= 10 {
		if n := int(int16(binary.BigEndian.Uint16(frame[8:10]))); n >= 0 && 10+n <= len(frame) {
			clientID = string(frame[10 : 10+n])
		}
	}
	line, err := json.Marshal(map[string]interface{}{
		"label": "sarama", "apiKey": key, "apiVersion": version, "clientId": clientID,
		"hex": hex.EncodeToString(frame),
	})
	check(err, "encoding a captured frame")
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err = l.f.Write(append(line, '\n'))
	check(err, "writing --capture")
}

func (s *sniffer) note(key, version int16) {
	name, ok := apiNames[key]
	if !ok {
		name = fmt.Sprintf("api%d", key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[name] == nil {
		s.seen[name] = map[int16]bool{}
	}
	s.seen[name][version] = true
}

// versions is e.g. {"Fetch": [4], "Produce": [3]}.
func (s *sniffer) versions() map[string][]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]int{}
	for name, vs := range s.seen {
		for v := range vs {
			out[name] = append(out[name], int(v))
		}
		sort.Ints(out[name])
	}
	return out
}

// Dial satisfies golang.org/x/net/proxy.Dialer, which sarama's Net.Proxy takes.
func (s *sniffer) Dial(network, addr string) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, s: s}, nil
}

type sniffConn struct {
	net.Conn
	s     *sniffer
	mu    sync.Mutex
	head  []byte // the first 8 bytes of the frame being written: size, api key, version
	skip  int    // bytes of the current frame still to pass
	frame []byte // with --capture: the frame being written, after its size prefix
}

func (c *sniffConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	rest := b
	for len(rest) > 0 {
		if c.skip > 0 {
			n := c.skip
			if n > len(rest) {
				n = len(rest)
			}
			if captureLog != nil {
				c.frame = append(c.frame, rest[:n]...)
			}
			c.skip -= n
			rest = rest[n:]
			if c.skip == 0 && captureLog != nil {
				captureLog.write(c.frame)
			}
			continue
		}
		need := 8 - len(c.head)
		if need > len(rest) {
			need = len(rest)
		}
		c.head = append(c.head, rest[:need]...)
		rest = rest[need:]
		if len(c.head) == 8 {
			size := int(int32(binary.BigEndian.Uint32(c.head[0:4])))
			c.s.note(int16(binary.BigEndian.Uint16(c.head[4:6])), int16(binary.BigEndian.Uint16(c.head[6:8])))
			c.skip = size - 4
			if captureLog != nil {
				c.frame = append(c.frame[:0], c.head[4:]...)
				if c.skip <= 0 {
					captureLog.write(c.frame)
				}
			}
			c.head = c.head[:0]
		}
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// --- records -----------------------------------------------------------------------------------

func recordKey(prefix string, i int) string { return fmt.Sprintf("%s-k%d", prefix, i) }

// recordValue is the key, then filler up to size bytes (compressible, as in the other drivers).
func recordValue(prefix string, i, size int) string {
	head := fmt.Sprintf("%s-%d|", prefix, i)
	if len(head) >= size {
		return head
	}
	return head + strings.Repeat("x", size-len(head))
}

// --- main --------------------------------------------------------------------------------------

var commands = map[string]func(*options){
	"sarama-produce-consume": saramaProduceConsume,
	"sarama-group":           saramaGroup,
	"sarama-admin":           saramaAdmin,
	"sarama-default":         saramaDefault,
	"api-versions":           apiVersions,
	"kafkago-admin":          kafkagoAdmin,
	"kafkago-group":          kafkagoGroup,
	"kafkago-rw":             kafkagoReadWrite,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		names := []string{}
		for n := range commands {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "usage: driver <%s> --bootstrap HOST:PORT --topic T ...\n",
			strings.Join(names, "|"))
		os.Exit(2)
	}
	subcommand = os.Args[1]
	o := &options{}
	fs := flag.NewFlagSet(subcommand, flag.ContinueOnError)
	fs.StringVar(&o.bootstrap, "bootstrap", "", "broker address HOST:PORT")
	fs.StringVar(&o.topic, "topic", "", "topic")
	fs.StringVar(&o.group, "group", "", "consumer group")
	fs.StringVar(&o.codec, "codec", "none", "none|gzip|snappy|lz4|zstd")
	fs.StringVar(&o.version, "version", "2.2.0", "sarama Config.Version (Kafka version), or 'default'")
	fs.IntVar(&o.count, "count", 1000, "records")
	fs.IntVar(&o.partitions, "partitions", 4, "partitions of the topic")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "bound on the whole subcommand")
	fs.BoolVar(&o.debug, "debug", false, "client debug logs on stderr")
	fs.BoolVar(&o.retention0, "retention0", false,
		"sarama-group: keep Consumer.Offsets.Retention at 0 (sarama then sends OffsetCommit v1)")
	fs.StringVar(&o.capture, "capture", "",
		"append every request frame sarama writes to this file (capture-harness JSON lines)")
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if o.bootstrap == "" || o.topic == "" {
		fail("--bootstrap and --topic are required")
	}
	if o.debug {
		logOut = log.New(os.Stderr, "", log.Lmicroseconds)
	}
	if o.capture != "" {
		f, err := os.OpenFile(o.capture, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		check(err, "--capture")
		defer f.Close()
		captureLog = &frameLog{f: f}
	}
	timer := time.AfterFunc(o.timeout, func() { fail("did not finish in %s", o.timeout) })
	defer timer.Stop()
	commands[subcommand](o)
}
