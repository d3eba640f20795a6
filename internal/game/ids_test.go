package game

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// Random UUIDs are version 4; ordered ones version 7, carrying the time
// they were made in their first 48 bits, so that later ids sort after
// earlier ones.
func TestUUIDs(t *testing.T) {
	for range 100 {
		if m := uuidPattern.FindStringSubmatch(NewUUID()); m == nil || m[1] != "4" {
			t.Fatalf("NewUUID: %v", m)
		}
	}
	before := time.Now().UnixMilli()
	id := NewOrderedUUID()
	after := time.Now().UnixMilli()
	m := uuidPattern.FindStringSubmatch(id)
	if m == nil || m[1] != "7" {
		t.Fatalf("NewOrderedUUID %s: %v", id, m)
	}
	ms, err := strconv.ParseInt(strings.ReplaceAll(id[:13], "-", ""), 16, 64)
	if err != nil || ms < before || ms > after {
		t.Fatalf("NewOrderedUUID %s holds %d, made between %d and %d", id, ms, before, after)
	}
	older := orderedAt(before - 1)
	if !(older < id) {
		t.Fatalf("an id of an earlier millisecond %s does not sort before %s", older, id)
	}
	if !strings.HasPrefix(NewPlayerSessionID(), "psess-") || !strings.HasPrefix(NewGameSessionIDString(), "gsess-") {
		t.Fatal("prefixes")
	}
}

// orderedAt is the smallest ordered id of millisecond ms.
func orderedAt(ms int64) string {
	var b [16]byte
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6] = 0x70
	return uuidText(b)
}
