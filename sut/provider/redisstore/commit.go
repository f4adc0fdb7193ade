package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/idemcheck/idemcheck/models"
	"github.com/idemcheck/idemcheck/sut/provider"
)

// commitScript charges and stores the charge's response under its key in
// one step (KEYS: the key, charge-seq, charges, charges:<account>,
// charge-account, charge-left; ARGV: the marker the request holds, the
// entry's head and tail, account, amount, fingerprint, retention in ms,
// the marker's token, the response's Content-Type, "1" to fence). When
// the key holds another record than the marker it answers {2, record}
// if that record is this request's completed answer (its token: the
// script ran before and its reply was lost), else {3} when fencing
// (another request took the key once the lease ran out: nothing is
// charged). Otherwise (the marker, or no key at all: the lease ran out
// and nobody took it) it appends the charge as chargeScript does, stores
// the completed record with the retention TTL and answers {1, number}.
var commitScript = redis.NewScript(appendLua + `local cur = redis.call("GET", KEYS[1])
if cur and cur ~= ARGV[1] then
  local ok, rec = pcall(cjson.decode, cur)
  if ok and type(rec) == "table" and rec.state == "completed" and rec.token == ARGV[8] then return {2, cur} end
  if ARGV[10] == "1" then return {3} end
end
local n, id = append(KEYS[2], KEYS[3], KEYS[4], "ch_%06d", ARGV[2], ARGV[3])
redis.call("HSET", KEYS[5], id, ARGV[4])
redis.call("HSET", KEYS[6], id, ARGV[5])
local rec = cjson.encode({state = "completed", fingerprint = ARGV[6], token = ARGV[8],
  response = {status = 201, content_type = ARGV[9], body = ARGV[2] .. id .. ARGV[3]}})
redis.call("SET", KEYS[1], rec, "PX", ARGV[7])
return {1, n}`)

// CommitCharge charges ch for account and stores its 201 under t's key in
// one script (commitScript), fenced by t's marker: CommitStored with the
// response, or with the stored one when the script already ran for t;
// CommitFenced when another request holds or completed the key. Without
// a marker (t.Token "": the GetThenSet and ProcessWithoutLock bugs take
// no lock) it only charges (AddCharge): CommitUnstored. Under the
// LeaseTooShort bug it does not fence: a charge that outlived its lease
// is made and overwrites the key, as glue without a fence does.
func (s *Store) CommitCharge(ctx context.Context, t provider.Taken, account string, ch models.Charge) (provider.Stored, provider.CommitVerdict, error) {
	if t.Token == "" {
		ch, err := s.AddCharge(ctx, account, ch)
		return provider.Stored{Status: http.StatusCreated, Body: mustJSON(ch)}, provider.CommitUnstored, err
	}
	if err := s.unreachable(ctx); err != nil {
		return provider.Stored{}, provider.CommitUnstored, err
	}
	var marker record
	if err := json.Unmarshal([]byte(t.Token), &marker); err != nil {
		return provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: the marker %q is no record: %v", t.Token, err)
	}
	ch.ID = ""
	head, tail := entryParts(ch)
	fence := "1"
	if s.planted.LeaseTooShort { // planted bug: LeaseTooShort
		fence = "0"
	}
	contentType := "application/json"
	res, err := commitScript.Run(ctx, s.c, []string{s.keyOf(t.Key), s.prefix + "charge-seq", s.prefix + "charges",
		s.prefix + "charges:" + account, s.prefix + "charge-account", s.prefix + "charge-left"},
		t.Token, head, tail, account, ch.Amount, t.Fingerprint, s.retentionMillis(), marker.Token, contentType, fence).Slice()
	if err != nil {
		return provider.Stored{}, provider.CommitUnstored, err
	}
	code, _ := res[0].(int64)
	switch code {
	case 1:
		n, _ := res[1].(int64)
		ch.ID = provider.ChargeID(n)
		return provider.Stored{Status: http.StatusCreated, ContentType: contentType, Body: mustJSON(ch)}, provider.CommitStored, nil
	case 2:
		raw, _ := res[1].(string)
		var rec record
		if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.Response == nil {
			return provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: %s holds no completed record: %q", s.keyOf(t.Key), raw)
		}
		return rec.Response.stored(), provider.CommitStored, nil
	case 3:
		return provider.Stored{}, provider.CommitFenced, nil
	}
	return provider.Stored{}, provider.CommitUnstored, fmt.Errorf("redisstore: the commit script answered %v", res)
}

// mustJSON is v's JSON; a Charge always marshals.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
